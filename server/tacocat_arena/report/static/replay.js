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

  function show(index) {
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
    document.querySelectorAll("#log li").forEach(function (li, i) {
      li.classList.toggle("current", i === current);
    });
    var li = document.querySelectorAll("#log li")[current];
    if (li && li.scrollIntoView) { li.scrollIntoView({ block: "nearest" }); }
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

  var rounds = $("round-select");
  var firstOfRound = {};
  var log = $("log");
  function build() {
    firstOfRound = {};
    rounds.textContent = "";
    log.textContent = "";
    frames.forEach(function (f, i) {
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
    });
  }
  build();

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
    stream.addEventListener("state", function (event) {
      var following = follow();
      frames = JSON.parse(event.data).frames;
      if (frames.length === 0) { return; }
      build();
      show(following ? frames.length - 1 : current);
    });
    // Over, but its record waits until its duplicate twin (same deal, seats swapped) ends.
    stream.addEventListener("held", function (event) {
      $("outcome").textContent = JSON.parse(event.data).outcome + ".";
      document.body.classList.add("held");
    });
    stream.addEventListener("end", function (event) {
      stream.close();
      var end = JSON.parse(event.data);
      document.body.classList.remove("live", "held");
      document.body.classList.add("ended");
      $("outcome").textContent = end.outcome;
      $("visibility").textContent = end.frames ? data.ended_note : end.outcome;
      if (end.frames && end.frames.length) {
        frames = end.frames;
        build();
        show(frames.length - 1);
      }
    });
  }
  // A live game opens on its newest step (and follows it), a replay on its first.
  var opening = data.stream && !/step=/.test(window.location.hash) ? frames.length - 1 : fromHash();
  if (frames.length) { show(opening); }
})();
