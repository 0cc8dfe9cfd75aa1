/* The web board of one game (docs/web.md).  No rules here: the server sends the legal moves with
   their paths, and this page offers only those; the server judges every move.

   Stable hooks for browser tests (data-* attributes):
     main#app                 data-version, data-ply, data-turn (W|B), data-you (W|B|""), data-status
                              (active|finished), data-flipped (0|1), data-ready (1 once a state is shown)
     [data-role=board] svg    the board; data-size (8|10)
     rect[data-square=N]      each playable square N (numbered as in the chat), class "last" on the
                              last move's squares, "sel" on the selected piece's square
     g[data-piece][data-at=N] a piece on square N; data-piece is w (white man), W (white king), b, B
     [data-mine]              on a piece of the player to move that has a legal move (tappable)
     circle[data-dest=N]      a destination of the selected piece (tap it to move)
     [data-last-path]         the line through the last move; [data-captured-mark=N] its captures
     [data-route=I]           route I drawn when several captures end on one square
     button[data-path-index=I] choose route I (data-path="22x15x6", its notation)
     button[data-action=flip|draw|resign|resign-confirm|resign-cancel], a[data-action=pdn]
     [data-role=status|message|note|paths|confirm|player-top|player-bottom]
     [data-role=player-*] [data-color=W|B] > [data-role=name|clock|captured]
   Review (issue 34): main#app data-view (the ply the board shows) and data-live (1: the game as it
   is now, the only position moves are played from; 0: stepped back); ol[data-role=moves] > li
   [data-ply=N] one item per ply (data-side W|B, data-capture on a capture, aria-current="step" on
   the ply shown) > button[data-goto=N]; button[data-action=first|back|forward|last|live] (live:
   "back to the game", shown while stepped back in a running game).  Home / ArrowLeft / ArrowRight
   / End step through the game.  window.draughtsBoard.onPly(fn) calls fn(ply, live) each time the
   shown ply changes, and .go(n) shows ply n (what later views of the page, as the analysis, plug in).
   Credentials: ?t=<seat or spectator token> in the page's URL is sent as "Authorization: Bearer"
   (and as ?t= on the event stream and the PDN link); ?lang=es|it|en picks the language.  A game's
   number alone shows nothing: a refused link leaves the page with the refusal's words.
   Telegram's Mini App (the page at /tg): Telegram's launch parameters in the address's fragment
   (tgWebAppData: the signed initData; tgWebAppThemeParams: the client's colours), or
   window.Telegram.WebApp when the client put it there (no script of Telegram's is loaded), are
   sent to /api/tg/session, which names the game and gives the seat token of a player (or a
   spectator's token, "watch"). */
(function () {
  "use strict";
  var app = document.getElementById("app");
  var BOOT = JSON.parse(app.dataset.boot), T = BOOT.texts, GAME = BOOT.game, S = 100;
  var NS = "http://www.w3.org/2000/svg";
  var q = new URLSearchParams(location.search), TOKEN = q.get("t") || "", LANG = BOOT.lang;
  var $ = function (sel) { return app.querySelector(sel); };
  var st = null, flip = false, sel = null, choosing = null, busy = false, skew = 0, poller = null;
  /* The version of the game the message line speaks of: a newer state makes it stale. */
  var said = -1;
  /* Review: the plies played (null until the list is read), the first position's side, the ply shown
     (null: the live game), the ply asked for, and the positions already read (a ply never changes). */
  var rec = null, firstSide = "W", view = null, want = null, plies = {}, reading = false, hooks = [];
  /* Told after every drawing of the page (a11y.js: the board's text alternative, the move field). */
  var drawn = [];
  /* The analysis view's (analysis.js) position shown instead of the ply's, and its drawings over the board. */
  var preview = null, overlays = [];
  var ROUTE_COLOURS = ["#ff8c00", "#e23cd6", "#00ced6", "#96e228", "#ffe228", "#a06eff"];
  /* Telegram's theme parameters and the CSS variables board.css reads them from. */
  var THEME = { bg_color: "--tg-bg", text_color: "--tg-text", button_color: "--tg-button",
                button_text_color: "--tg-button-text", hint_color: "--tg-hint", secondary_bg_color: "--tg-secondary-bg" };

  function api(path, extra) {
    var p = new URLSearchParams({ lang: LANG });
    if (TOKEN && extra) p.set("t", TOKEN);
    return "/api/g/" + GAME + "/" + path + "?" + p.toString();
  }
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
  function say(text, error, version) {
    var m = $("[data-role=message]");
    m.textContent = text || "";
    m.classList.toggle("error", !!error);
    said = version != null ? version : (st ? st.version : -1);
  }
  /* The game's version only grows (every change bumps it), and the event stream, the answer to an
     action and a poll can arrive in any order: a state is shown only when it is newer than the one
     on the page, so an answer that comes late never puts an older position back. */
  function accept(state) {
    if (st && state.version <= st.version) return false;
    var before = st;
    /* Stepped back to what is now the game's present: the live board takes over. */
    if (view !== null && view >= state.ply) { view = null; want = null; }
    render(state);
    news(before, st);
    sync();
    return true;
  }
  /* The message line says the latest thing that happened: a move (who played what); anything else
     (a draw offered, a resignation, a time-out) the status says, and the line goes. */
  function news(before, now) {
    /* On the first state a message already there (a refused link's) stays. */
    if (said >= now.version || (!before && $("[data-role=message]").textContent)) return;
    if (now.last_move && (!before || now.ply > before.ply)) {
      var fill = { name: now.players[now.turn === "W" ? "B" : "W"].name, move: now.last_move.notation, id: now.game_id };
      say(T.move_played.replace(/\{(name|move|id)\}/g, function (_, k) { return fill[k]; }), false, now.version);
    } else if (before) {
      say("", false, now.version);
    }
  }

  /* Where a square is drawn: its row and column as the server gives them (seen from White), turned
     half round when the board is seen from Black's side. */
  function place(n) {
    var s = st.squareAt[n], size = st.size, flipped = st.flipped !== flip;
    return flipped ? [size - 1 - s[0], size - 1 - s[1]] : [s[0], s[1]];
  }
  function centre(n) { var p = place(n); return [p[1] * S + S / 2, p[0] * S + S / 2]; }
  function points(path) { return path.map(function (n) { return centre(n).join(","); }).join(" "); }

  function render(state) {
    if (state) {
      st = state;
      st.squareAt = {};
      st.squares.forEach(function (s) { st.squareAt[s[0]] = [s[1], s[2]]; });
      skew = st.now - Date.now() / 1000;
      if (sel !== null && !movesFrom(sel).length) sel = null;
      choosing = null;
    }
    if (!st) return;
    drawBoard();
    drawPlayers();
    drawPanel();
    var d = app.dataset;
    d.version = st.version; d.ply = st.ply; d.turn = st.turn; d.you = st.you || ""; d.status = st.status;
    d.flipped = (st.flipped !== flip) ? "1" : "0";
    d.view = view === null ? st.ply : view; d.live = view === null ? "1" : "0";
    app.classList.toggle("past", view !== null);
    drawReview();
    d.ready = "1";
    drawn.forEach(function (fn) { try { fn(); } catch (e) { /* a hook's fault stays its own */ } });
  }

  function movesFrom(n) { return playable().filter(function (m) { return m.path[0] === n; }); }
  /* Moves are only played from the live position: stepped back, nothing is offered. */
  function playable() { return view === null && !preview ? (st.moves || []) : []; }
  /* What the board draws: the live state, or the position after the ply stepped to. */
  function shown() {
    if (preview) return preview;
    if (view === null) return { pieces: st.pieces, last: st.last_move };
    var p = plies[view];
    return { pieces: p.pieces, last: p.move ? { path: p.move.path, captured: p.move.captured, notation: p.move.notation } : null };
  }

  function drawBoard() {
    var size = st.size, box = $("[data-role=board]");
    var svg = el("svg", { viewBox: "0 0 " + size * S + " " + size * S, "data-size": size, role: "img" });
    for (var r = 0; r < size; r++) for (var c = 0; c < size; c++) {
      el("rect", { x: c * S, y: r * S, width: S, height: S, "class": "light" }, svg);
    }
    var sh = shown(), lastMove = sh.last;
    var last = lastMove ? lastMove.path : [];
    st.squares.forEach(function (s) {
      var n = s[0], p = place(n), cls = "dark";
      if (last.indexOf(n) >= 0 && (n === last[0] || n === last[last.length - 1])) cls += " last";
      if (n === sel) cls += " sel";
      el("rect", { x: p[1] * S, y: p[0] * S, width: S, height: S, "class": cls, "data-square": n }, svg);
      el("text", { x: p[1] * S + 5, y: p[0] * S + 21, "class": "num" }, svg).textContent = n;
    });
    if (lastMove) {
      el("polyline", { points: points(last), "class": "trail", "data-last-path": lastMove.notation }, svg);
      lastMove.captured.forEach(function (n) {
        var c = centre(n), d = 22;
        var g = el("g", { "data-captured-mark": n }, svg);
        el("line", { x1: c[0] - d, y1: c[1] - d, x2: c[0] + d, y2: c[1] + d, "class": "cap" }, g);
        el("line", { x1: c[0] - d, y1: c[1] + d, x2: c[0] + d, y2: c[1] - d, "class": "cap" }, g);
      });
    }
    var starts = {};
    playable().forEach(function (m) { starts[m.path[0]] = 1; });
    Object.keys(sh.pieces).forEach(function (key) {
      var n = +key, code = sh.pieces[key], c = centre(n);
      var g = el("g", { "data-piece": code, "data-at": n }, svg);
      if (starts[n]) g.setAttribute("data-mine", "1");
      el("circle", { cx: c[0], cy: c[1], r: 37, "class": code.toLowerCase() === "w" ? "pw" : "pb" }, g);
      if (code === "W" || code === "B") el("circle", { cx: c[0], cy: c[1], r: 19, "class": "crown" }, g);
    });
    if (choosing) {
      choosing.forEach(function (m, i) {
        el("polyline", { points: points(m.path), "class": "route", stroke: ROUTE_COLOURS[i % 6], "data-route": i }, svg);
        var mid = centre(m.path[1]);
        el("text", { x: mid[0] - 9, y: mid[1] + 11, "class": "route-num" }, svg).textContent = i + 1;
      });
    } else if (sel !== null) {
      var seen = {};
      movesFrom(sel).forEach(function (m) {
        var end = m.path[m.path.length - 1];
        if (seen[end]) return;
        seen[end] = 1;
        var c = centre(end);
        el("circle", { cx: c[0], cy: c[1], r: 17, "class": "dest", "data-dest": end }, svg);
      });
    }
    overlays.forEach(function (fn) { try { fn(svg, centre, el); } catch (e) { /* its own fault */ } });
    svg.classList.toggle("mine", !!playable().length);
    svg.addEventListener("click", tap);
    box.replaceChildren(svg);
  }

  /* Pieces of a colour taken by the ply shown: the live state's count, or, stepped back, the first
     position's pieces less that ply's. */
  function taken(colour) {
    if (view === null || !plies[0]) return st.captured[colour];
    var count = function (pieces) {
      return Object.keys(pieces).filter(function (k) { return pieces[k].toUpperCase() === colour; }).length;
    };
    return count(plies[0].pieces) - count(plies[view].pieces);
  }
  function clockText(seconds) {
    if (seconds == null) return "";
    seconds = Math.max(0, Math.floor(seconds));
    var d = Math.floor(seconds / 86400), h = Math.floor(seconds % 86400 / 3600);
    var m = Math.floor(seconds % 3600 / 60), s = seconds % 60, two = function (x) { return (x < 10 ? "0" : "") + x; };
    if (d) return d + "d " + h + "h";
    return (h ? h + ":" + two(m) : m) + ":" + two(s);
  }
  function left() { return st.deadline == null ? null : st.deadline - (Date.now() / 1000 + skew); }

  function drawPlayers() {
    var bottom = (st.flipped !== flip) ? "B" : "W", top = bottom === "W" ? "B" : "W";
    [["top", top], ["bottom", bottom]].forEach(function (pair) {
      var box = $("[data-role=player-" + pair[0] + "]"), colour = pair[1], p = st.players[colour];
      box.replaceChildren();
      box.dataset.color = colour;
      box.classList.toggle("turn", st.status === "active" && st.turn === colour);
      var parts = [["dot", ""], ["name", p.name + (st.you === colour ? " ★" : "")],
                   ["cap-count", T.captured + ": " + taken(colour === "W" ? "B" : "W")], ["clock", ""]];
      parts.forEach(function (part) {
        var span = document.createElement("span");
        span.className = part[0] + (part[0] === "dot" ? " " + colour : "");
        span.textContent = part[1];
        if (part[0] !== "dot") span.dataset.role = part[0] === "cap-count" ? "captured" : part[0];
        box.appendChild(span);
      });
    });
    tick();
  }
  function tick() {
    if (!st) return;
    ["W", "B"].forEach(function (colour) {
      var c = app.querySelector("[data-color=" + colour + "] [data-role=clock]");
      if (!c) return;
      var running = st.status === "active" && st.turn === colour && st.deadline != null;
      c.textContent = running ? clockText(left()) : (st.status === "active" ? clockText(st.move_seconds) : "");
    });
  }

  function drawPanel() {
    $("[data-role=variant]").textContent = st.variant_name;
    var status = st.status_text;
    if (st.status === "active" && st.draw_offer) status += " · " + T.draw_offered;
    $("[data-role=status]").textContent = status;
    var player = !!st.you && st.status === "active";
    var draw = $("[data-action=draw]"), resign = $("[data-action=resign]");
    draw.hidden = resign.hidden = !player;
    draw.textContent = st.draw_offer && st.draw_offer !== st.you ? T.accept_draw : T.draw;
    draw.disabled = busy || st.draw_offer === st.you;
    resign.disabled = busy;
    if (!player) $("[data-role=confirm]").hidden = true;
    var note = !st.you ? T.spectator : (st.status === "active" && playable().length ? T.your_turn : "");
    $("[data-role=note]").textContent = note;
    var paths = $("[data-role=paths]");
    paths.replaceChildren();
    paths.hidden = !choosing;
    if (choosing) {
      var label = document.createElement("span");
      label.textContent = T.choose_path;
      paths.appendChild(label);
      choosing.forEach(function (m, i) {
        var b = document.createElement("button");
        b.type = "button";
        b.textContent = (i + 1) + ": " + m.notation;
        b.style.borderColor = ROUTE_COLOURS[i % 6];
        b.dataset.pathIndex = i;
        b.dataset.path = m.notation;
        b.addEventListener("click", function () { send({ path: m.path, ply: st.ply }); });
        paths.appendChild(b);
      });
      var back = document.createElement("button");
      back.type = "button";
      back.textContent = T.cancel;
      back.dataset.action = "path-cancel";
      back.addEventListener("click", function () { choosing = null; sel = null; render(); });
      paths.appendChild(back);
    }
  }

  function tap(ev) {
    if (view !== null && st && st.moves && st.moves.length) { say(T.stepped_back, true); return; }
    if (busy || !st || !playable().length) return;
    var target = ev.target.closest("[data-dest],[data-at],[data-square]");
    if (!target) return;
    var n = +(target.dataset.dest || target.dataset.at || target.dataset.square);
    if (sel !== null && !choosing) {
      var to = movesFrom(sel).filter(function (m) { return m.path[m.path.length - 1] === n; });
      if (to.length === 1) { send({ path: to[0].path, ply: st.ply }); return; }
      if (to.length > 1) { choosing = to; render(); return; }
      /* An empty square the selected piece cannot reach: the server's rules say why (no rules here). */
      if (!st.pieces[n] && st.squareAt[n]) { send({ path: [sel, n], ply: st.ply }); return; }
    }
    choosing = null;
    /* Any piece can be selected: one that may not move shows no destinations, and a try with it is
       explained by the server (another's piece, a capture that is compulsory elsewhere). */
    sel = st.pieces[n] ? (sel === n ? null : n) : null;
    render();
  }

  /* -- the move list and stepping through the game ------------------------------------------------- */
  function moveText(m) { return m.number + (m.side === "W" ? ". " : "… ") + m.notation; }
  function drawReview() {
    var list = $("[data-role=moves]"), at = view === null ? st.ply : view;
    if (rec) {
      /* The list only grows (a game's past never changes): new plies are appended, nothing redrawn. */
      while (list.children.length > rec.length) list.removeChild(list.lastChild);
      for (var i = list.children.length; i < rec.length; i++) {
        var m = rec[i], li = document.createElement("li"), b = document.createElement("button");
        li.dataset.ply = m.ply; li.dataset.side = m.side;
        if (m.captured.length) li.dataset.capture = "1";
        if (i === 0 && m.side === "B") li.style.gridColumn = "2";
        b.type = "button"; b.dataset.goto = m.ply; b.textContent = moveText(m);
        li.appendChild(b);
        list.appendChild(li);
      }
      var current = null;
      Array.prototype.forEach.call(list.children, function (li) {
        if (+li.dataset.ply === at) { li.setAttribute("aria-current", "step"); current = li; } else li.removeAttribute("aria-current");
      });
      if (current && list.scrollHeight > list.clientHeight) {
        var top = current.offsetTop, bottom = top + current.offsetHeight;
        if (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight) list.scrollTop = top - list.clientHeight / 2;
      }
    }
    var end = st.ply;
    $("[data-action=first]").disabled = $("[data-action=back]").disabled = at <= 0;
    $("[data-action=forward]").disabled = $("[data-action=last]").disabled = at >= end;
    $("[data-action=live]").hidden = view === null || st.status !== "active";
  }
  /* The plies played: read once, then each new ply a state brings is appended (a gap, as after the
     page slept, reads the list again). */
  function sync() {
    if (!st || reading) return;
    if (rec && rec.length === st.ply) return;
    if (rec && st.ply === rec.length + 1 && st.last_move) {
      var prev = rec[rec.length - 1], side = st.turn === "W" ? "B" : "W";
      var number = prev ? (prev.side === "B" ? prev.number + 1 : prev.number) : 1;
      rec.push({ ply: st.ply, number: number, side: side, notation: st.last_move.notation,
                 path: st.last_move.path, captured: st.last_move.captured });
      drawReview();
      return;
    }
    reading = true;
    fetch(api("moves"), { headers: headers() }).then(function (r) { return r.json(); }).then(function (data) {
      reading = false;
      if (!data.ok) return;
      rec = data.moves; firstSide = data.start.turn;
      plies[0] = { ply: 0, pieces: data.start.pieces, move: null, description: data.start.description };
      drawReview();
      if (rec.length !== st.ply) sync();
    }, function () { reading = false; });
  }
  /* The ply being shown or on its way (a key pressed again before a position arrives steps on from it). */
  function current() { return want !== null ? want : (view === null ? st.ply : view); }
  /* Show ply n (0: the first position); the live game's ply shows the live game. */
  function go(n) {
    if (!st) return;
    n = Math.max(0, Math.min(st.ply, n));
    want = n;
    if (n === st.ply) { show(null); return; }
    if (plies[n]) { show(n); return; }
    fetch(api("ply/" + n), { headers: headers() }).then(function (r) { return r.json(); }).then(function (data) {
      if (!data.ok) { if (want === n) want = view; say(data.error, true); return; }
      plies[n] = data;
      if (want === n) show(n);
    }, function () { if (want === n) want = view; say(T.offline, true); });
  }
  function show(n) {
    var changed = view !== n;
    view = n; sel = null; choosing = null; preview = null;
    if (n === null) want = null;
    if ($("[data-role=message]").textContent === T.stepped_back) say("", false, said);
    render();
    if (changed) hooks.forEach(function (fn) { try { fn(current(), view === null); } catch (e) { /* a hook's fault stays its own */ } });
  }
  function keys(ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || !st) return;
    var t = ev.target, tag = t && t.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (t && t.isContentEditable)) return;
    var to = { Home: 0, End: st.ply, ArrowLeft: current() - 1, ArrowRight: current() + 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    go(to);
  }

  function post(path, body) {
    busy = true;
    say(T.sending);
    drawPanel();
    return fetch(api(path), { method: "POST", headers: headers(), body: JSON.stringify(body || {}) })
      .then(function (r) { return r.json().catch(function () { return { ok: false, error: r.statusText }; }); })
      .then(function (data) {
        busy = false;
        sel = null;
        choosing = null;
        if (!(data.state && accept(data.state))) render();
        if (!data.ok) say(data.error || data.message, true);
        /* A move is said by the line its state gives (the chat's answer repeats the status); a draw's
           answer only while the game is where the answer left it and goes on (a result is the
           status's to say, as is a resignation's). */
        else if (path === "draw" && data.state && data.state.version >= st.version && st.status === "active") {
          say(data.message, false, st.version);
        } else if ($("[data-role=message]").textContent === T.sending) say("", false, said);
      }, function () { busy = false; say(T.offline, true); render(); });
  }
  function send(body) { return post("move", body); }

  function wire() {
    $("[data-action=flip]").textContent = T.flip;
    $("[data-action=resign]").textContent = T.resign;
    $("[data-action=resign-confirm]").textContent = T.yes_resign;
    $("[data-action=resign-cancel]").textContent = T.cancel;
    $("[data-role=confirm-text]").textContent = T.resign_confirm;
    var pdn = $("[data-action=pdn]");
    pdn.textContent = T.pdn;
    pdn.href = api("pdn", true);
    $("[data-action=flip]").addEventListener("click", function () { flip = !flip; render(); });
    [["first", "step_first", "«"], ["back", "step_back", "‹"], ["forward", "step_forward", "›"],
     ["last", "step_last", "»"]].forEach(function (b) {
      var button = $("[data-action=" + b[0] + "]");
      button.textContent = b[2];
      button.setAttribute("aria-label", T[b[1]]);
      button.title = T[b[1]];
    });
    $("[data-action=live]").textContent = T.back_to_game;
    $("[data-role=moves-title]").textContent = T.moves;
    $("[data-action=first]").addEventListener("click", function () { go(0); });
    $("[data-action=back]").addEventListener("click", function () { go(current() - 1); });
    $("[data-action=forward]").addEventListener("click", function () { go(current() + 1); });
    $("[data-action=last]").addEventListener("click", function () { go(st.ply); });
    $("[data-action=live]").addEventListener("click", function () { go(st.ply); });
    $("[data-role=moves]").addEventListener("click", function (ev) {
      var b = ev.target.closest("[data-goto]");
      if (b) go(+b.dataset.goto);
    });
    document.addEventListener("keydown", keys);
    window.draughtsBoard = { onPly: function (fn) { hooks.push(fn); }, go: go,
      ply: function () { return st ? current() : null; }, live: function () { return st ? st.ply : null; },
      status: function () { return st ? st.status : null; }, token: TOKEN, lang: LANG, game: GAME, texts: T,
      preview: function (p) { preview = p; sel = null; choosing = null; render(); },
      overlay: function (fn) { overlays.push(fn); render(); } };
    /* For a11y.js: told after each drawing; what is shown (live or the ply stepped to, with the
       position in words); a move as typed, sent as a tap's is; a line on the message row. */
    window.draughtsBoard.onRender = function (fn) { drawn.push(fn); };
    window.draughtsBoard.shown = function () {
      if (!st) return null;
      var p = view === null ? null : plies[view];
      /* A position the analysis previews has only the words it brings (none: the board's bare name). */
      var words = preview ? preview.description || "" : p ? p.description || "" : st.description || "";
      return { state: st, live: view === null, ply: view === null ? st.ply : view, description: words };
    };
    window.draughtsBoard.send = send;
    window.draughtsBoard.say = say;
    document.dispatchEvent(new Event("draughtsboard"));
    $("[data-action=draw]").addEventListener("click", function () { post("draw"); });
    $("[data-action=resign]").addEventListener("click", function () { $("[data-role=confirm]").hidden = false; });
    $("[data-action=resign-cancel]").addEventListener("click", function () { $("[data-role=confirm]").hidden = true; });
    $("[data-action=resign-confirm]").addEventListener("click", function () {
      $("[data-role=confirm]").hidden = true;
      post("resign", { confirm: true });
    });
    setInterval(tick, 1000);
  }

  function load() {
    return fetch(api("state"), { headers: headers() }).then(function (r) { return r.json(); }).then(function (data) {
      if (data.state) accept(data.state);
      if (!data.ok) say(data.error, true);
      return data;
    });
  }
  /* Live: the server's event stream; polling only when the stream cannot be kept open. */
  function live() {
    if (!window.EventSource) { poll(); return; }
    var es = new EventSource(api("events", true));
    es.addEventListener("state", function (e) {
      var s = JSON.parse(e.data);
      accept(s);
      if ($("[data-role=message]").textContent === T.offline) say("");
      /* A finished game changes no more: the server ends its stream, and the page does not reopen it. */
      if (s.status !== "active") es.close();
    });
    es.onerror = function () {
      if (es.readyState === 2) { poll(); } else { say(T.offline, true); }
    };
  }
  function poll() {
    if (poller) return;
    poller = setInterval(function () { if (!busy) load().catch(function () { say(T.offline, true); }); }, 2000);
  }

  /* The ply a Review link opens the page at: ?ply=N, or a Mini App start parameter's p<N> suffix. */
  function asked() {
    var m = /^[0-9]{1,6}$/.exec(q.get("ply") || "") ||
            /^g?[0-9]{1,9}(?:s[A-Za-z0-9_-]{22})?p([0-9]{1,6})$/.exec(q.get("tgWebAppStartParam") || "");
    return m ? +(m[1] || m[0]) : null;
  }
  function start() {
    wire();
    load().then(function (data) {
      if (data.ok && asked() !== null) go(asked());
      if (data.ok) live();
    }, function () { say(T.offline, true); poll(); });
  }

  /* -- inside Telegram ---------------------------------------------------------------------------- */
  function launch() {
    var h = new URLSearchParams(location.hash.replace(/^#/, ""));
    var wa = window.Telegram && window.Telegram.WebApp;
    var theme = null;
    try { theme = JSON.parse(h.get("tgWebAppThemeParams") || "null"); } catch (e) { theme = null; }
    if (!theme && wa && wa.themeParams) theme = wa.themeParams;
    return { init: h.get("tgWebAppData") || (wa && wa.initData) || "", theme: theme, wa: wa,
             game: q.get("tgWebAppStartParam") || q.get("g") || "" };
  }
  function applyTheme(theme) {
    if (!theme || typeof theme !== "object") return;
    var root = document.documentElement;
    Object.keys(THEME).forEach(function (k) {
      var v = theme[k];
      if (typeof v === "string" && /^#[0-9a-fA-F]{3,8}$/.test(v)) root.style.setProperty(THEME[k], v);
    });
    root.classList.add("tg");
  }
  function session(tg) {
    var body = { initData: tg.init };
    if (tg.game) body.game = tg.game;
    return fetch("/api/tg/session?lang=" + encodeURIComponent(LANG),
                 { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().catch(function () { return { ok: false, error: T.offline }; }); })
      .then(function (data) {
        if (!data.ok) throw data;
        GAME = data.game; TOKEN = data.token || data.watch || ""; LANG = data.lang; T = data.texts;
        document.documentElement.lang = LANG;
        document.title = data.title;
        $("[data-role=title]").textContent = data.title;
        return data;
      });
  }

  if (BOOT.tg) {
    var tg = launch();
    applyTheme(tg.theme);
    if (tg.wa && tg.wa.ready) tg.wa.ready();
    session(tg).then(start, function (err) { say((err && err.error) || T.offline, true); });
  } else {
    start();
  }
})();
