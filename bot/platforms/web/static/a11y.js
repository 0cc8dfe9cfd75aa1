/* The web board read without sight (issue 34; docs/web.md "Readable without sight").  board.js draws;
   this adds, through window.draughtsBoard's hooks:
     - the board's text alternative: the svg (role="img") is named by the position in words, the
       same words the chat's pictures carry (the state's and each ply's "description": whose turn,
       then each side's men and kings by square); a polite live region
       ([data-role=board-description]) says it again when the shown ply changes (stepping), so a
       screen reader hears the position it stepped to;
     - accessible names for the page's groups (the stepper and the actions) and nothing decorative
       read out (the players' colour dots);
     - playing by keyboard alone: a move field (form[data-role=move-entry] > input[data-role=
       move-input]) that takes a move as the chat writes it (22-18, 29x22x15, the short 29x15) and
       sends it as a tap's move is (the server judges it and explains a refusal); it is there while
       the viewer plays the running game, and, stepped back, says moves are played from the game as
       it is now.  The squares stay pointer targets; stepping is the page's keys (Home / ArrowLeft /
       ArrowRight / End, outside a text field) and the move list's buttons. */
(function () {
  "use strict";
  var app = document.getElementById("app");
  if (!app) return;
  var $ = function (sel) { return app.querySelector(sel); };
  var spoken = null, form = null, input = null;

  function build(B) {
    var T = B.texts || {};
    var live = document.createElement("p");
    live.className = "sr-only";
    live.dataset.role = "board-description";
    live.id = "board-description";
    live.setAttribute("aria-live", "polite");
    $("[data-role=board]").insertAdjacentElement("afterend", live);
    var stepper = $("[data-role=stepper]"), actions = $("nav.actions");
    if (stepper) stepper.setAttribute("aria-label", T.stepper || "");
    if (actions) actions.setAttribute("aria-label", T.actions || "");
    /* A list styled without bullets stays a list to every reader (some drop it otherwise). */
    $("[data-role=moves]").setAttribute("role", "list");

    form = document.createElement("form");
    form.className = "move-entry";
    form.dataset.role = "move-entry";
    form.hidden = true;
    form.setAttribute("autocomplete", "off");
    var label = document.createElement("label");
    label.setAttribute("for", "move-input");
    label.textContent = T.move_entry || "";
    input = document.createElement("input");
    input.type = "text";
    input.id = "move-input";
    input.dataset.role = "move-input";
    input.setAttribute("inputmode", "text");
    input.setAttribute("autocapitalize", "off");
    input.setAttribute("spellcheck", "false");
    input.setAttribute("aria-describedby", "move-hint");
    var hint = document.createElement("span");
    hint.id = "move-hint";
    hint.className = "hint";
    hint.textContent = T.move_entry_hint || "";
    var play = document.createElement("button");
    play.type = "submit";
    play.dataset.action = "move-entry";
    play.textContent = T.move_entry_send || "";
    form.append(label, input, play, hint);
    $("[data-role=message]").insertAdjacentElement("afterend", form);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var shown = B.shown(), text = input.value.trim();
      if (!shown || !text) return;
      if (!shown.live) { B.say(T.stepped_back, true); return; }
      var before = shown.state.version;
      B.send({ move: text, ply: shown.state.ply }).then(function () {
        var now = B.shown();
        /* Played: the field is emptied for the next move; refused, the words stay to be mended. */
        if (now && now.state.version > before && now.state.ply > shown.state.ply) input.value = "";
      });
    });
  }

  function update(B) {
    var shown = B.shown();
    if (!shown) return;
    var st = shown.state, T = B.texts || {};
    var svg = $("[data-role=board] svg");
    var words = shown.description || T.board_label || "";
    if (svg) {
      svg.setAttribute("aria-label", words);
      svg.setAttribute("aria-roledescription", T.board_label || "");
    }
    Array.prototype.forEach.call(app.querySelectorAll(".player .dot"), function (d) { d.setAttribute("aria-hidden", "true"); });
    /* Said again only when the ply shown changes (a step, or a move played): not on every redraw. */
    var key = shown.ply + "/" + shown.live;
    if (spoken !== null && spoken !== key) $("[data-role=board-description]").textContent = words;
    spoken = key;
    if (form) form.hidden = !(st.you && st.status === "active");
  }

  function attach() {
    var B = window.draughtsBoard;
    if (!B || !B.onRender || form) return;
    build(B);
    B.onRender(function () { update(B); });
    update(B);
  }
  document.addEventListener("draughtsboard", attach);
  /* board.js may have set its hooks before this script ran (both deferred, board.js first). */
  attach();
})();
