// The replay viewer: draws the frames embedded in the page (built by report/frames.py).
// Written small on purpose: no library, no network; the page works opened from file://.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var frames = data.frames;
  var current = 0;
  var timer = null;
  var $ = function (id) { return document.getElementById(id); };

  function cardList(target, cards, played) {
    var wanted = played.slice();
    target.textContent = "";
    cards.forEach(function (card) {
      var el = document.createElement("span");
      el.className = "card";
      var at = wanted.indexOf(card);
      if (at >= 0) { el.className += " played"; wanted.splice(at, 1); }
      el.textContent = String(card);
      target.appendChild(el);
    });
    target.setAttribute("data-cards", cards.join(" "));
    if (cards.length === 0) {
      var none = document.createElement("span");
      none.className = "empty";
      none.textContent = "no cards";
      target.appendChild(none);
    }
  }

  // A hand a spectator may not see (a game in progress): its size, as cards face down.
  function hiddenHand(target, size) {
    target.textContent = "";
    target.setAttribute("data-cards", "");
    var said = document.createElement("span");
    said.className = "sr-only";
    said.textContent = size + " cards, face down";
    target.appendChild(said);
    for (var i = 0; i < size; i++) {
      var el = document.createElement("span");
      el.className = "card back";
      el.setAttribute("aria-hidden", "true");
      target.appendChild(el);
    }
  }

  // ``quiet``: a live update, not the reader's step: the event list follows it only if the
  // reader left that list at its newest event (``pinned``), and the page never scrolls.
  function show(index, quiet, pinned) {
    if (frames.length === 0) { return; }
    current = Math.max(0, Math.min(frames.length - 1, index));
    var f = frames[current];
    for (var seat = 0; seat < 2; seat++) {
      var own = f.actor === seat ? f.played : [];
      if (f.hands) { cardList($("hand-" + seat), f.hands[seat], own); }
      else { hiddenHand($("hand-" + seat), f.sizes[seat]); }
      $("size-" + seat).textContent = String(f.sizes[seat]);
      $("won-" + seat).textContent = String(f.won[seat]);
      $("seat-" + seat).classList.toggle("acting", f.actor === seat);
    }
    cardList($("discards"), f.discards, f.played);
    $("draw").textContent = String(f.draw);
    $("score").setAttribute("data-won", f.won.join("-"));
    var covered = {};
    f.tiles.forEach(function (t) { covered[t[0]] = t[1]; });
    document.querySelectorAll("#board .tile").forEach(function (tile) {
      var space = Number(tile.getAttribute("data-space"));
      tile.setAttribute("class", "tile" + (space in covered ? " covered seat" + covered[space] : ""));
    });
    var cat = $("tacocat");
    cat.setAttribute("data-pos", String(f.pos));
    cat.setAttribute("transform", "translate(" + (f.pos * data.cell) + ",0)");
    $("event-text").textContent = f.text.join("\n");
    $("step").textContent = "Step " + (current + 1) + " of " + frames.length + ", round " + f.round;
    $("step").setAttribute("data-index", String(current));
    $("round-select").value = String(f.round);
    var was = log.querySelector("li.current");
    if (was) { was.classList.remove("current"); }
    var li = log.children[current];
    if (li) {
      li.classList.add("current");
      if (!quiet || pinned) { reveal(li); }
    }
    $("prev").disabled = $("first").disabled = current === 0;
    $("next").disabled = $("last").disabled = current === frames.length - 1;
    if (current === frames.length - 1) { stop(); }
  }

  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    $("play").textContent = "Play";
  }

  function play() {
    if (timer !== null) { stop(); return; }
    if (current === frames.length - 1) { show(0); }
    $("play").textContent = "Pause";
    timer = setInterval(function () { show(current + 1); }, Number($("speed").value));
  }

  // The event list scrolls inside itself, never the page: the page stays where the reader
  // put it (the board in view) while a live game's events arrive.
  function reveal(li) {
    var top = li.offsetTop, bottom = top + li.offsetHeight;
    if (top < log.scrollTop) { log.scrollTop = top; }
    else if (bottom > log.scrollTop + log.clientHeight) { log.scrollTop = bottom - log.clientHeight; }
  }

  function atNewest() { return log.scrollTop + log.clientHeight >= log.scrollHeight - 2; }

  // The event list and the round menu.  A live game's frames only grow, so an update adds
  // the new ones (nothing already shown is redrawn); ``fresh`` rebuilds both (the record's
  // frames at the end replace the spectator's).
  function build(fresh) {
    if (fresh || frames.length < log.children.length) {
      firstOfRound = {};
      rounds.textContent = "";
      log.textContent = "";
    }
    for (var i = log.children.length; i < frames.length; i++) { add(i); }
  }

  function add(i) {
    var f = frames[i];
    if (!(f.round in firstOfRound)) {
      firstOfRound[f.round] = i;
      var option = document.createElement("option");
      option.value = String(f.round);
      option.textContent = "Round " + f.round;
      rounds.appendChild(option);
    }
    var li = document.createElement("li");
    li.textContent = f.text.join(" / ");
    li.addEventListener("click", function () { stop(); show(i); });
    log.appendChild(li);
  }

  var rounds = $("round-select");
  var firstOfRound = {};
  var log = $("log");
  build(true);

  // A live game's pending decisions (whose, what, by when: the server's clock, which the
  // page learns from ``server_now``), drawn above the board and in the seat's box, their
  // clocks counting down ten times a second.
  var pending = data.pending || [];
  var offset = data.server_now ? data.server_now * 1000 - Date.now() : 0;
  var ticker = null;
  var ASKS = { replace: "choose cards to replace", duel: "choose a duel card",
    attack: "attack", defend: "defend" };

  function drawPending() {
    var box = $("pending");
    if (!box) { return; }
    var now = Date.now() + offset;
    var said = [];
    for (var seat = 0; seat < 2; seat++) {
      $("clock-" + seat).textContent = "";
      $("seat-" + seat).classList.remove("waiting");
    }
    pending.forEach(function (p) {
      var clock = "no time limit";
      if (p.deadline_at !== null) {
        clock = (Math.max(0, p.deadline_at * 1000 - now) / 1000).toFixed(1) + " s left";
      }
      said.push(p.bot + " (seat " + p.seat + ", " + clock + ")");
      $("clock-" + p.seat).textContent = "to " + p.kind + ", " + clock;
      $("seat-" + p.seat).classList.add("waiting");
    });
    // Two seats asked at once are asked the same thing (D1, R3).
    box.textContent = said.length
      ? "Waiting for " + said.join(" and ") + " to " + (ASKS[pending[0].kind] || pending[0].kind)
      : "";
    box.setAttribute("data-seats", pending.map(function (p) { return p.seat; }).join(" "));
  }

  function setPending(list) {
    pending = list || [];
    drawPending();
    if (pending.length && ticker === null) { ticker = setInterval(drawPending, 100); }
    if (!pending.length && ticker !== null) { clearInterval(ticker); ticker = null; }
  }

  rounds.addEventListener("change", function () { stop(); show(firstOfRound[rounds.value]); });
  $("first").addEventListener("click", function () { stop(); show(0); });
  $("prev").addEventListener("click", function () { stop(); show(current - 1); });
  $("next").addEventListener("click", function () { stop(); show(current + 1); });
  $("last").addEventListener("click", function () { stop(); show(frames.length - 1); });
  $("play").addEventListener("click", play);
  $("speed").addEventListener("change", function () { if (timer !== null) { stop(); play(); } });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "SELECT") { return; }
    if (e.key === "ArrowRight") { stop(); show(current + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { stop(); show(current - 1); e.preventDefault(); }
    else if (e.key === "Home") { stop(); show(0); e.preventDefault(); }
    else if (e.key === "End") { stop(); show(frames.length - 1); e.preventDefault(); }
    else if (e.key === " ") { play(); e.preventDefault(); }
  });
  // #step=N (1-based) opens the page at a step: links can point into a game.
  function fromHash() {
    var match = /step=(\d+)/.exec(window.location.hash);
    return match ? Number(match[1]) - 1 : 0;
  }
  window.addEventListener("hashchange", function () { stop(); show(fromHash()); });

  // A game in progress: new frames arrive over the page's event stream (the board follows
  // the newest unless the reader stepped back); at "end" the stream brings the full record's
  // frames and the page becomes the game's replay, without a reload.
  if (data.stream) {
    var stream = new EventSource(data.stream);
    var follow = function () { return current >= frames.length - 1; };
    var updates = 0;
    stream.addEventListener("state", function (event) {
      var following = follow();
      var pinned = atNewest();
      var state = JSON.parse(event.data);
      setPending(state.pending);
      document.body.setAttribute("data-updates", String(++updates));
      if (state.frames.length === 0) { return; }
      frames = state.frames;
      build(false);
      show(following ? frames.length - 1 : current, true, pinned);
    });
    // Over, but its record waits until its duplicate twin (same deal, seats swapped) ends.
    stream.addEventListener("held", function (event) {
      $("outcome").textContent = JSON.parse(event.data).outcome + ".";
      setPending([]);
      document.body.classList.add("held");
    });
    stream.addEventListener("end", function (event) {
      stream.close();
      var end = JSON.parse(event.data);
      document.body.classList.remove("live", "held");
      document.body.classList.add("ended");
      $("outcome").textContent = end.outcome;
      $("visibility").textContent = end.frames ? data.ended_note : end.outcome;
      setPending([]);
      if (end.frames && end.frames.length) {
        var pinned = atNewest();
        frames = end.frames;
        build(true);
        show(frames.length - 1, true, pinned);
      }
    });
  }
  // A live game opens on its newest step (and follows it), a replay on its first.
  var opening = data.stream && !/step=/.test(window.location.hash) ? frames.length - 1 : fromHash();
  if (frames.length) { show(opening, true, true); }
  setPending(pending);
})();
