/* A tournament's page (docs/web.md): its standings and each round's pairings, drawn from the view
   the server put in the boot data, then from /api/t/<id> asked again every few seconds (drawn again
   only when its version changed; a finished tournament is not asked again).  Every name is written
   as text, never as markup.

   Stable hooks for browser tests (data-* attributes):
     main#app                 data-version, data-status (registering|running|finished), data-rounds
                              (rounds paired), data-ready (1 once a view is shown)
     [data-role=standings] table   tr[data-rank=N] per player ([data-withdrawn] when they left),
                              inside it [data-role=name|points], td[data-tiebreak=CODE]
     [data-role=cross] table  a round robin's cross table
     [data-role=rounds] section[data-round=N]   tr[data-board=B] per board, inside it
                              [data-role=white|black|result], a[data-game=ID] its spectator page
     [data-role=status|note|title|kind|counted], [data-role=deadline] under a running round
   Credentials: ?t=<the tournament's token> in the page's URL is sent on as ?t=; ?lang=es|it|en. */
(function () {
  "use strict";
  var app = document.getElementById("app");
  var BOOT = JSON.parse(app.dataset.boot), T = BOOT.texts, ID = BOOT.tournament;
  var q = new URLSearchParams(location.search), TOKEN = q.get("t") || "", LANG = BOOT.lang;
  var POLL_MS = 5000;
  var shown = null, timer = null;
  var $ = function (sel) { return app.querySelector(sel); };

  function node(tag, attrs, text, parent) {
    var e = document.createElement(tag);
    for (var k in attrs) if (attrs[k] != null) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  /* 2.5 as "2½", 0.5 as "½"; other fractions (Sonneborn-Berger's quarters) as decimals. */
  function num(x) {
    if (x == null) return "";
    var whole = Math.floor(x), rest = x - whole;
    if (rest === 0) return String(whole);
    if (rest === 0.5) return (whole ? String(whole) : "") + "½";
    return String(Math.round(x * 100) / 100);
  }
  function standings(v) {
    var box = $("[data-role=standings]");
    box.textContent = "";
    var table = node("table", {}, null, box);
    node("caption", { "class": "sr" }, T.standings, table);
    var head = node("tr", {}, null, node("thead", {}, null, table));
    node("th", { scope: "col", "class": "val" }, T.rank, head);
    node("th", { scope: "col" }, T.player, head);
    node("th", { scope: "col", "class": "val" }, T.points, head);
    v.tiebreaks.forEach(function (tb) {
      var th = node("th", { scope: "col", "class": "val" }, null, head);
      node("abbr", { title: tb.name }, tb.code, th);
    });
    var body = node("tbody", {}, null, table);
    v.standings.forEach(function (row) {
      var tr = node("tr", { "data-rank": row.rank, "data-withdrawn": row.withdrawn ? "1" : null,
                            "class": row.withdrawn ? "gone" : null }, null, body);
      node("td", { "class": "val" }, String(row.rank), tr);
      var name = node("th", { scope: "row", "class": "name", "data-role": "name" }, row.name, tr);
      if (row.withdrawn) node("span", { "class": "mark" }, " (" + T.withdrawn + ")", name);
      node("td", { "class": "val", "data-role": "points" }, num(row.points), tr);
      row.tiebreaks.forEach(function (value, i) {
        node("td", { "class": "val", "data-tiebreak": v.tiebreaks[i] ? v.tiebreaks[i].code : i }, num(value), tr);
      });
    });
  }
  function cross(v) {
    var section = $("[data-role=cross-section]"), box = $("[data-role=cross]");
    section.hidden = !v.cross;
    box.textContent = "";
    if (!v.cross) return;
    var table = node("table", { "class": "cross" }, null, box);
    node("caption", { "class": "sr" }, T.cross, table);
    var head = node("tr", {}, null, node("thead", {}, null, table));
    node("th", { scope: "col" }, T.player, head);
    v.standings.forEach(function (row, i) { node("th", { scope: "col", title: row.name }, String(i + 1), head); });
    var body = node("tbody", {}, null, table);
    v.cross.forEach(function (cells, i) {
      var tr = node("tr", {}, null, body);
      node("th", { scope: "row", "class": "name" }, (i + 1) + ". " + v.standings[i].name, tr);
      cells.forEach(function (cell, j) {
        node("td", { "class": i === j ? "self" : null }, i === j ? "×" : (cell || ""), tr);
      });
    });
  }
  function rounds(v) {
    var box = $("[data-role=rounds]");
    box.textContent = "";
    if (!v.rounds.length) { node("p", { "class": "note" }, T.no_rounds, box); return; }
    v.rounds.forEach(function (rnd) {
      var sec = node("section", { "data-round": rnd.number, "aria-labelledby": "round-" + rnd.number }, null, box);
      node("h3", { id: "round-" + rnd.number }, rnd.title, sec);
      if (!rnd.complete && rnd.deadline) {
        var when = new Date(rnd.deadline * 1000).toLocaleString(LANG, { dateStyle: "medium", timeStyle: "short" });
        node("p", { "class": "note", "data-role": "deadline" }, T.deadline + " " + when, sec);
      }
      var table = node("table", {}, null, node("div", { "class": "scroll" }, null, sec));
      var head = node("tr", {}, null, node("thead", {}, null, table));
      node("th", { scope: "col", "class": "val" }, T.board, head);
      node("th", { scope: "col" }, T.white, head);
      node("th", { scope: "col", "class": "res" }, T.result, head);
      node("th", { scope: "col" }, T.black, head);
      node("th", { scope: "col" }, T.game, head);
      var body = node("tbody", {}, null, table);
      rnd.pairings.forEach(function (p) {
        var tr = node("tr", { "data-board": p.board }, null, body);
        node("td", { "class": "val" }, String(p.board), tr);
        node("td", { "class": "name", "data-role": "white" }, p.white, tr);
        node("td", { "class": "res", "data-role": "result", "data-result": p.result || "" }, p.shown, tr);
        node("td", { "class": "name", "data-role": "black" }, p.black || "", tr);
        var cell = node("td", {}, null, tr);
        if (p.watch) node("a", { href: p.watch, "data-game": p.game }, T.game + " #" + p.game, cell);
      });
    });
  }
  function render(v) {
    shown = v;
    document.title = v.title;
    $("[data-role=title]").textContent = v.title;
    $("[data-role=kind]").textContent = v.format_name + " · " + v.variant_name;
    $("[data-role=status]").textContent = v.status_text;
    $("[data-role=standings-title]").textContent = T.standings;
    $("[data-role=counted]").textContent = v.standings_text;
    $("[data-role=cross-title]").textContent = T.cross;
    $("[data-role=rounds-title]").textContent = T.rounds;
    standings(v);
    cross(v);
    rounds(v);
    app.dataset.version = v.version;
    app.dataset.status = v.status;
    app.dataset.rounds = String(v.rounds_paired);
    app.dataset.ready = "1";
  }
  function poll() {
    var p = new URLSearchParams({ lang: LANG, t: TOKEN });
    fetch("/api/t/" + ID + "?" + p.toString(), { cache: "no-store" }).then(function (r) { return r.json(); })
      .then(function (body) {
        if (!body.ok) { $("[data-role=note]").textContent = body.error || T.offline; return; }
        $("[data-role=note]").textContent = T.live;
        if (!shown || body.tournament.version !== shown.version) render(body.tournament);
        if (body.tournament.status === "finished") { clearInterval(timer); $("[data-role=note]").textContent = ""; }
      }, function () { $("[data-role=note]").textContent = T.offline; });
  }
  render(BOOT.view);
  if (shown.status !== "finished") {
    $("[data-role=note]").textContent = T.live;
    timer = setInterval(poll, POLL_MS);
  }
})();
