/* A storm run's page (docs/web.md, "A storm run"): the puzzle of the moment drawn from the state the
   server sends (no rules here: it sends the legal moves with their paths), the clock counting down
   what the server said was left, and every answer sent to /api/storm/<id>/move, whose answer is the
   run as it is now.  The server keeps the time: at zero the page asks for the state, and an answer
   the server finds late is refused there.

   Stable hooks for browser tests (data-* attributes):
     main#app                 data-run, data-version, data-index (the puzzle), data-ply (moves played
                              in it), data-status (running|finished), data-solved, data-missed,
                              data-puzzle (its bank id), data-ready (1 once a state is shown)
     [data-role=board] svg    role=img, aria-label the position in words; rect[data-square=N],
                              g[data-piece=w|W|b|B][data-at=N] (data-mine when it can move),
                              circle[data-dest=N], [data-last-path]
     button[data-path-index=I][data-path=notation] a route when several captures end on one square
     [data-role=clock|solved|missed|status|message|board-description]
     form[data-role=move-entry] > input[data-role=move-input], button[data-action=move-entry]
   Credentials: ?t=<the run's token> in the page's URL, sent on as Authorization: Bearer. */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg", S = 100;
  var app = document.getElementById("app");
  var BOOT = JSON.parse(app.dataset.boot), T = BOOT.texts, RUN = BOOT.run;
  var q = new URLSearchParams(location.search), TOKEN = q.get("t") || "", LANG = BOOT.lang;
  var st = null, sel = null, choosing = null, deadline = 0, ticking = null, busy = false, asked = false;
  var $ = function (s) { return app.querySelector(s); };

  function headers() {
    var h = { "Content-Type": "application/json" };
    if (TOKEN) h.Authorization = "Bearer " + TOKEN;
    return h;
  }
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function say(text, kind) {
    var m = $("[data-role=message]");
    m.textContent = text || "";
    m.classList.toggle("error", kind === "error");
    m.classList.toggle("good", kind === "good");
  }
  function api(method, body) {
    return fetch("/api/storm/" + RUN + (method === "POST" ? "/move" : "") + "?lang=" + LANG,
                 { method: method, headers: headers(), body: body ? JSON.stringify(body) : undefined, cache: "no-store" })
      .then(function (r) { return r.json().catch(function () { return { ok: false, error: T.error }; }); });
  }

  function place(n) {
    var s = st.squareAt[n], size = st.size;
    return st.flipped ? [size - 1 - s[0], size - 1 - s[1]] : [s[0], s[1]];
  }
  function centre(n) { var p = place(n); return [p[1] * S + S / 2, p[0] * S + S / 2]; }
  function points(path) { return path.map(function (n) { return centre(n).join(","); }).join(" "); }
  function running() { return st && st.status === "running"; }
  function movesFrom(n) { return running() ? st.moves.filter(function (m) { return m.path[0] === n; }) : []; }

  function drawBoard() {
    var box = $("[data-role=board]");
    if (!st.size) { box.replaceChildren(); return; }
    var size = st.size;
    var svg = el("svg", { viewBox: "0 0 " + size * S + " " + size * S, "data-size": size, role: "img",
                          "aria-label": st.description || T.board });
    for (var r = 0; r < size; r++) for (var c = 0; c < size; c++) {
      el("rect", { x: c * S, y: r * S, width: S, height: S, "class": "light" }, svg);
    }
    var last = st.last_move ? st.last_move.path : [];
    st.squares.forEach(function (s) {
      var n = s[0], p = place(n), cls = "dark";
      if (last.length && (n === last[0] || n === last[last.length - 1])) cls += " last";
      if (n === sel) cls += " sel";
      el("rect", { x: p[1] * S, y: p[0] * S, width: S, height: S, "class": cls, "data-square": n }, svg);
      el("text", { x: p[1] * S + 5, y: p[0] * S + 21, "class": "num" }, svg).textContent = n;
    });
    if (st.last_move) {
      el("polyline", { points: points(last), "class": "trail", "data-last-path": st.last_move.notation }, svg);
    }
    var starts = {};
    if (running()) st.moves.forEach(function (m) { starts[m.path[0]] = 1; });
    Object.keys(st.pieces).forEach(function (key) {
      var n = +key, code = st.pieces[key], c = centre(n);
      var g = el("g", { "data-piece": code, "data-at": n }, svg);
      if (starts[n]) g.setAttribute("data-mine", "1");
      el("circle", { cx: c[0], cy: c[1], r: 37, "class": code.toLowerCase() === "w" ? "pw" : "pb" }, g);
      if (code === "W" || code === "B") el("circle", { cx: c[0], cy: c[1], r: 19, "class": "crown" }, g);
    });
    if (sel !== null && !choosing) {
      var seen = {};
      movesFrom(sel).forEach(function (m) {
        var end = m.path[m.path.length - 1];
        if (seen[end]) return;
        seen[end] = 1;
        var c = centre(end);
        el("circle", { cx: c[0], cy: c[1], r: 17, "class": "dest", "data-dest": end }, svg);
      });
    }
    svg.classList.toggle("mine", running() && st.moves.length > 0);
    svg.addEventListener("click", tap);
    box.replaceChildren(svg);
  }

  function drawPaths() {
    var box = $("[data-role=paths]");
    box.replaceChildren();
    box.hidden = !choosing;
    if (!choosing) return;
    var label = document.createElement("span");
    label.textContent = T.choose;
    box.appendChild(label);
    choosing.forEach(function (m, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = (i + 1) + ". " + m.notation;
      b.setAttribute("data-path-index", i);
      b.setAttribute("data-path", m.notation);
      b.addEventListener("click", function () { var chosen = m; choosing = null; sel = null; draw(); send({ path: chosen.path }); });
      box.appendChild(b);
    });
    var cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = T.cancel;
    cancel.setAttribute("data-action", "path-cancel");
    cancel.addEventListener("click", function () { choosing = null; sel = null; draw(); });
    box.appendChild(cancel);
  }

  function tap(ev) {
    if (!running() || busy) return;
    var t = ev.target, dest = t.getAttribute("data-dest");
    if (dest !== null && sel !== null) {
      var end = +dest, found = movesFrom(sel).filter(function (m) { return m.path[m.path.length - 1] === end; });
      if (found.length === 1) { sel = null; draw(); send({ path: found[0].path }); return; }
      choosing = found;
      draw();
      return;
    }
    var g = t.closest("[data-piece]"), sq = t.getAttribute("data-square");
    var n = g ? +g.getAttribute("data-at") : (sq !== null ? +sq : null);
    sel = n !== null && movesFrom(n).length ? n : null;
    choosing = null;
    draw();
  }

  function clockText(seconds) {
    var s = Math.max(0, Math.ceil(seconds)), m = Math.floor(s / 60);
    return m + ":" + ("0" + (s % 60)).slice(-2);
  }
  function tick() {
    if (!st) return;
    var left = running() ? Math.max(0, deadline - Date.now() / 1000) : 0;
    $("[data-role=clock]").textContent = clockText(left);
    app.classList.toggle("low", running() && left <= 20);
    if (running() && left <= 0 && !asked) {
      /* The server says when the time is up (and ends the run): ask it. */
      asked = true;
      api("GET").then(function (r) { if (r.ok) show(r.state); asked = false; },
                      function () { asked = false; });
    }
  }

  function draw() {
    drawBoard();
    drawPaths();
  }
  function show(state) {
    if (st && state.version < st.version) return;
    var moved = !st || state.index !== st.index || state.ply !== st.ply || state.status !== st.status;
    st = state;
    st.squareAt = {};
    st.squares.forEach(function (s) { st.squareAt[s[0]] = [s[1], s[2]]; });
    if (moved) { sel = null; choosing = null; }
    deadline = Date.now() / 1000 + st.left;
    var d = app.dataset;
    d.run = st.run; d.version = st.version; d.index = st.index; d.ply = st.ply; d.status = st.status;
    d.solved = st.solved; d.missed = st.missed; d.puzzle = st.puzzle || "";
    $("[data-role=variant]").textContent = st.variant_name;
    $("[data-role=solved]").textContent = st.solved;
    $("[data-role=missed]").textContent = st.missed;
    $("[data-role=status]").textContent = running() ? st.status_text + (st.to_play ? " · " + st.to_play : "") : st.status_text;
    if (moved) $("[data-role=board-description]").textContent = st.description || "";
    app.classList.toggle("over", !running());
    $("[data-role=move-entry]").hidden = !running();
    draw();
    tick();
    d.ready = "1";
  }

  function send(body) {
    if (!running() || busy) return;
    busy = true;
    body.index = st.index;
    body.ply = st.ply;
    api("POST", body).then(function (r) {
      busy = false;
      if (r.state) show(r.state);
      var good = r.verdict === "right" || r.verdict === "solved";
      say(r.message || r.error || "", good ? "good" : "error");
      if (r.verdict !== "illegal" && body.move !== undefined) $("[data-role=move-input]").value = "";
    }, function () { busy = false; say(T.error, "error"); });
  }

  $("[data-role=time-label]").textContent = T.time;
  $("[data-role=solved-label]").textContent = T.solved;
  $("[data-role=missed-label]").textContent = T.missed;
  $("[data-role=move-label]").textContent = T.move_label;
  $("[data-role=move-hint]").textContent = T.move_hint;
  $("[data-action=move-entry]").textContent = T.play;
  $("[data-role=scoreline]").setAttribute("aria-label", T.score);
  $("[data-role=move-entry]").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var text = $("[data-role=move-input]").value.trim();
    if (text) send({ move: text });
  });
  show(BOOT.state);
  ticking = setInterval(tick, 250);
})();
