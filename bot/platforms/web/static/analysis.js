/* The analysis on the board (docs/web.md, issue 34): a finished game's stored analysis, read from
   /api/g/<id>/analysis, drawn beside the move list.  No engine here: every number comes from the server.

   Stable hooks for browser tests:
     section[data-role=analysis]   data-status (ready|running|none|active)
     button[data-action=analyse]   asks for the analysis (a player of a finished game with none yet)
     svg[data-role=graph]          the evaluation graph; circle[data-graph-ply=N] a point per ply (tap: go to ply N),
                                   text[data-graph-number] the move numbers on its axis
     ol[data-role=moves] li[data-mark="?"|"??"|""] with span[data-role=mark]; li[data-ending] a known-ending note
     [data-role=analysis-note]     at a marked move: the better move and what the played one cost
     svg [data-arrow][data-from=A][data-to=B]   the better move drawn on the board at a marked move
     [data-role=line] button[data-line-step=I]  the refutation line's moves (I from 1; 0: the move played);
                                   button[data-action=line-back|line-forward|line-leave]
   Stepping through the line shows its positions on the board without changing the list's ply;
   any step of the game (or line-leave) returns to it. */
(function () {
  "use strict";
  var app = document.getElementById("app"), box = app.querySelector("[data-role=analysis]");
  var B = null, T = null, data = null, at = null, step = 0, polling = null;

  function h(name, attrs, parent, text) {
    var e = document.createElement(name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function url() {
    var p = new URLSearchParams({ lang: B.lang });
    return "/api/g/" + B.game + "/analysis?" + p.toString();
  }
  function headers() {
    var x = { "Content-Type": "application/json" };
    if (B.token) x.Authorization = "Bearer " + B.token;
    return x;
  }
  function noteAt(ply) {
    if (!data || !data.notes) return null;
    for (var i = 0; i < data.notes.length; i++) if (data.notes[i].ply === ply) return data.notes[i];
    return null;
  }

  function read() {
    return fetch(url(), { headers: headers() }).then(function (r) { return r.json(); }).then(function (d) {
      if (!d.ok) return;
      data = d;
      if (d.status === "running" && !polling) polling = setInterval(read, 3000);
      if (d.status !== "running" && polling) { clearInterval(polling); polling = null; }
      draw();
    });
  }
  function ask() {
    var b = box.querySelector("[data-action=analyse]");
    if (b) b.disabled = true;
    fetch(url(), { method: "POST", headers: headers(), body: "{}" }).then(function (r) { return r.json(); }).then(function (d) {
      box.querySelector("[data-role=analysis-message]").textContent = d.ok ? d.message : d.error;
      read();
    });
  }

  function draw() {
    box.dataset.status = data.status;
    /* Nothing to show a spectator before there is an analysis (nor anyone while the game is played). */
    box.hidden = data.status === "active" || (data.status === "none" && !data.can_request);
    if (data.status === "ready") box.querySelector("[data-role=analysis-message]").textContent = "";
    var body = box.querySelector("[data-role=analysis-body]");
    body.replaceChildren();
    if (data.status === "none" || data.status === "running") {
      if (data.status === "running") h("p", {}, body, T.analysis_running);
      if (data.can_request) {
        h("button", { type: "button", "data-action": "analyse" }, body, T.analyse).addEventListener("click", ask);
      }
    }
    if (data.status === "ready") { graph(body); h("p", { "class": "legend" }, body, T.marks_legend); }
    h("div", { "data-role": "analysis-here" }, body);
    marks();
    here();
  }

  /* The evaluation graph: one point per ply, x the ply, y the evaluation from White's side (±5 men
     at the edges); each point is a button for pointer and keyboard alike. */
  function graph(parent) {
    var ev = data.evaluations, n = Math.max(ev.length, 1), W = 600, H = 150, pad = 18, NS = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + (H + pad));
    svg.setAttribute("data-role", "graph");
    svg.setAttribute("role", "group");
    svg.setAttribute("aria-label", T.graph);
    function s(name, attrs, p) {
      var e = document.createElementNS(NS, name);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      (p || svg).appendChild(e);
      return e;
    }
    var x = function (i) { return 8 + (W - 16) * (n === 1 ? 0.5 : i / (n - 1)); };
    var y = function (v) { return H / 2 - Math.max(-5, Math.min(5, v)) / 5 * (H / 2 - 6); };
    s("rect", { x: 0, y: 0, width: W, height: H / 2, "class": "g-white" });
    s("rect", { x: 0, y: H / 2, width: W, height: H / 2, "class": "g-black" });
    s("line", { x1: 0, y1: H / 2, x2: W, y2: H / 2, "class": "g-axis" });
    s("polyline", { points: ev.map(function (e, i) { return x(i) + "," + y(e.eval); }).join(" "), "class": "g-line" });
    var every = Math.max(1, Math.ceil(n / 2 / 10));
    ev.forEach(function (e, i) {
      var moveNo = Math.floor((e.ply - 1 + (data.first_turn === "B" ? 1 : 0)) / 2) + 1;
      var first = (e.ply - 1 + (data.first_turn === "B" ? 1 : 0)) % 2 === 0;
      if (first && (moveNo - 1) % every === 0) {
        var tx = s("text", { x: x(i), y: H + pad - 4, "class": "g-num", "data-graph-number": moveNo });
        tx.textContent = moveNo;
      }
      var note = noteAt(e.ply), label = (note ? note.notation + note.mark : "") + " " + (e.eval > 0 ? "+" : "") + e.eval;
      var c = s("circle", { cx: x(i), cy: y(e.eval), r: note && note.mark ? 7 : 5, tabindex: 0, role: "button",
                            "data-graph-ply": e.ply, "class": "g-pt" + (note && note.mark ? " g-mark" : ""),
                            "aria-label": moveNo + (first ? ". " : "… ") + label.trim() });
      var title = document.createElementNS(NS, "title");
      title.textContent = c.getAttribute("aria-label");
      c.appendChild(title);
    });
    svg.addEventListener("click", function (ev2) {
      var t = ev2.target.closest("[data-graph-ply]");
      if (t) B.go(+t.getAttribute("data-graph-ply"));
    });
    svg.addEventListener("keydown", function (ev2) {
      var t = ev2.target.closest("[data-graph-ply]");
      if (t && (ev2.key === "Enter" || ev2.key === " ")) { ev2.preventDefault(); ev2.stopPropagation(); B.go(+t.getAttribute("data-graph-ply")); }
    });
    parent.appendChild(svg);
    mark(svg);
  }
  function mark(svg) {
    var g = svg || box.querySelector("[data-role=graph]");
    if (!g) return;
    Array.prototype.forEach.call(g.querySelectorAll("[data-graph-ply]"), function (c) {
      c.classList.toggle("g-here", +c.getAttribute("data-graph-ply") === at);
    });
  }

  /* The marks on the move list's items (the list only grows, so they are put on again as it does). */
  function marks() {
    if (!data || data.status !== "ready") return;
    Array.prototype.forEach.call(app.querySelectorAll("[data-role=moves] li[data-ply]"), function (li) {
      if (li.querySelector("[data-role=mark]")) return;
      var note = noteAt(+li.dataset.ply);
      li.dataset.mark = note ? note.mark : "";
      if (!note) return;
      if (note.ending) li.dataset.ending = "1";
      var text = note.mark + (note.ending ? "◆" : "");
      var sp = h("span", { "data-role": "mark", "class": "mark" + (note.mark === "??" ? " blunder" : "") }, null, text);
      li.querySelector("button").appendChild(sp);
    });
  }

  /* At the ply shown: a marked move's better move (an arrow on the board) and the refuting line. */
  function here() {
    var where = box.querySelector("[data-role=analysis-here]");
    if (!where) return;
    where.replaceChildren();
    mark();
    var note = at !== null ? noteAt(at) : null;
    if (!note) { setArrow(null); return; }
    var p = h("p", { "data-role": "analysis-note" }, where);
    if (note.mark) {
      p.textContent = note.notation + note.mark + " · " + T.better + " " + note.better.notation + " · " + T.costs + " " + note.loss;
    }
    if (note.ending) h("p", { "data-role": "ending-note", "class": "ending" }, where, note.ending);
    if (note.mark && note.line && note.line.length) {
      var nav = h("div", { "data-role": "line", role: "group", "aria-label": T.line, "class": "line" }, where);
      h("span", { "class": "line-title" }, nav, T.line + ":");
      h("button", { type: "button", "data-action": "line-back", "aria-label": T.line_back }, nav, "‹").addEventListener("click", function () { lineTo(step - 1); });
      h("button", { type: "button", "data-line-step": 0, "class": "line-move" }, nav, note.notation + note.mark).addEventListener("click", function () { lineTo(0); });
      note.line.forEach(function (m, i) {
        h("button", { type: "button", "data-line-step": i + 1, "class": "line-move" }, nav, m.notation).addEventListener("click", function () { lineTo(i + 1); });
      });
      h("button", { type: "button", "data-action": "line-forward", "aria-label": T.line_forward }, nav, "›").addEventListener("click", function () { lineTo(step + 1); });
      h("button", { type: "button", "data-action": "line-leave", "aria-label": T.line_leave }, nav, "×").addEventListener("click", function () { lineTo(0); });
      stepMarks();
    }
    arrow(note);
  }
  function stepMarks() {
    var nav = box.querySelector("[data-role=line]");
    if (!nav) return;
    nav.dataset.step = step;
    Array.prototype.forEach.call(nav.querySelectorAll("[data-line-step]"), function (b) {
      if (+b.dataset.lineStep === step) b.setAttribute("aria-current", "step"); else b.removeAttribute("aria-current");
    });
    var note = noteAt(at);
    nav.querySelector("[data-action=line-back]").disabled = step <= 0;
    nav.querySelector("[data-action=line-forward]").disabled = !note || step >= note.line.length;
  }
  /* Step I of the line: the position after its I-th move (0: the game's own position at the mark). */
  function lineTo(i) {
    var note = noteAt(at);
    if (!note || !note.line) return;
    step = Math.max(0, Math.min(note.line.length, i));
    stepMarks();
    arrow(note);
  }
  function arrow(note) {
    setArrow(step === 0 && note && note.better ? function (svg, centre, el) {
      var path = note.better.path, a = centre(path[0]), b = centre(path[path.length - 1]);
      var g = el("g", { "data-arrow": note.better.notation, "data-from": path[0], "data-to": path[path.length - 1], "class": "arrow" }, svg);
      var pts = path.map(function (n) { return centre(n).join(","); }).join(" ");
      el("polyline", { points: pts, "class": "arrow-line" }, g);
      var dx = b[0] - a[0], dy = b[1] - a[1];
      if (path.length > 2) { var c = centre(path[path.length - 2]); dx = b[0] - c[0]; dy = b[1] - c[1]; }
      var len = Math.sqrt(dx * dx + dy * dy) || 1, ux = dx / len, uy = dy / len, s = 26;
      var tip = [b[0] + ux * 8, b[1] + uy * 8];
      el("polygon", { points: [tip, [tip[0] - ux * s - uy * s * 0.7, tip[1] - uy * s + ux * s * 0.7],
                               [tip[0] - ux * s + uy * s * 0.7, tip[1] - uy * s - ux * s * 0.7]].map(function (q) { return q.join(","); }).join(" "),
                      "class": "arrow-head" }, g);
    } : null);
  }

  function start() {
    B = window.draughtsBoard; T = B.texts;
    box.querySelector("[data-role=analysis-title]").textContent = T.analysis_title;
    B.overlay(function (svg, centre, el) { if (drawOver) drawOver(svg, centre, el); });
    B.onPly(function (ply) { at = ply; step = 0; here(); });
    new MutationObserver(marks).observe(app.querySelector("[data-role=moves]"), { childList: true });
    /* The first state's ply, once known; then the analysis (a finished game's is read once). */
    var wait = setInterval(function () {
      if (B.status() === null) return;
      clearInterval(wait);
      at = B.ply();
      read();
    }, 50);
  }
  /* One drawing over the board: the arrow for the ply shown, or nothing; the board is drawn again
     with the line's position when one is being stepped through. */
  var drawOver = null;
  function setArrow(fn) { drawOver = fn; B.preview(previewNow()); }
  /* The line's position being shown (kept when the arrow is redrawn). */
  function previewNow() {
    var note = noteAt(at);
    if (!note || !note.line || step === 0) return null;
    var m = note.line[step - 1];
    return { pieces: m.pieces, last: { path: m.path, captured: m.captured, notation: m.notation } };
  }

  if (window.draughtsBoard) start(); else document.addEventListener("draughtsboard", start, { once: true });
})();
