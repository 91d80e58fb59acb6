// The person's page: draws the seat's state (server-sent events) and sends its answers.
// It knows the rules only through the legal options the server sends with each request:
// a move that is not among them cannot be chosen, and the server checks every answer again.
"use strict";

let state = null;
let clockOffset = 0; // server time - local time, in seconds
let selected = []; // indices into the hand
let answers = []; // defence: one value or "sacrifice" per attack card
let sending = false;

const $ = (id) => document.getElementById(id);
const seatName = (seat) => (state && seat === state.seat ? "you" : (state ? state.opponent : "the bot"));
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const cards = (list) => (list && list.length ? list.join(" ") : "nothing");

// A space as the board shows it: by the number printed on it, with its position (as
// play/narrate.py's _space words it for the replay page).
function space(position) {
  const marks = state.view ? state.view.hand_sizes : [];
  return position >= 1 && position <= marks.length
    ? `the space marked ${marks[position - 1]} (position ${position})` : `position ${position}`;
}

function describe(ev) {
  switch (ev.type) {
    case "deal":
      return `Round ${ev.round}: the Tacocat is on ${space(ev.position)}; ${ev.hand_size} cards each` +
        (ev.hand ? `; you were dealt ${cards(ev.hand)}` : "");
    case "replace":
      return `${cap(seatName(ev.seat))} discarded ${cards(ev.discarded)}` +
        (ev.drawn ? ` and drew ${cards(ev.drawn)}` : (ev.discarded.length ? ` and drew ${ev.discarded.length}` : ""));
    case "duel":
      return `Duel: you ${ev.cards[state.seat]}, ${state.opponent} ${ev.cards[1 - state.seat]}` +
        (ev.winner === null || ev.winner === undefined ? " (a tie: both discarded)" : `; ${seatName(ev.winner)} attack first`);
    case "attack":
      return `${cap(seatName(ev.seat))} attacked with ${cards(ev.cards)}`;
    case "defend": {
      const parts = ev.answers.map((a, i) => (a === null ? `sacrificed against ${ev.attack[i]}` : `${a} on ${ev.attack[i]}`));
      return `${cap(seatName(ev.seat))} answered: ${parts.join(", ")}` +
        (ev.sacrificed && ev.sacrificed.length ? ` (lost ${cards(ev.sacrificed)})` : "") +
        `; ${seatName(ev.trick_winner)} won the trick`;
    }
    case "showdown":
      return `Showdown: you ${ev.cards[state.seat]}, ${state.opponent} ${ev.cards[1 - state.seat]}` +
        (ev.winner === null || ev.winner === undefined ? " (a tie)" : `; the lower card wins: ${seatName(ev.winner)}`);
    case "round_end":
      return ev.winner === null || ev.winner === undefined
        ? `Round ${ev.round} tied: the Tacocat stays`
        : `${cap(seatName(ev.winner))} won round ${ev.round}: the Tacocat moves from position ${ev.tacocat_from} to ${ev.tacocat_to}`;
    case "substituted":
      return `The referee played for ${seatName(ev.seat)} (${ev.reason})`;
    case "forfeit":
      return `Forfeit: ${ev.detail || ev.termination || ""}`;
    case "game_end":
      return ev.winner === null || ev.winner === undefined ? "The game is a draw" : `${cap(seatName(ev.winner))} won the game`;
    default:
      return ev.type;
  }
}

function cap(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function counts(values) {
  const map = new Map();
  for (const v of values) map.set(v, (map.get(v) || 0) + 1);
  return map;
}

function subMultiset(small, big) {
  const have = counts(big);
  for (const [v, n] of counts(small)) if ((have.get(v) || 0) < n) return false;
  return true;
}

function sameMultiset(a, b) {
  return a.length === b.length && subMultiset(a, b);
}

function selectedValues() {
  return selected.map((i) => state.view.hand[i]).sort((a, b) => a - b);
}

// Whether hand card `index` may be clicked now (toggled into or out of the selection).
function cardEnabled(index) {
  const req = state.request;
  if (!req || sending) return false;
  if (selected.includes(index)) return true;
  const legal = req.legal;
  const value = state.view.hand[index];
  if (legal.kind === "replace") return selected.length < legal.max_replace;
  if (legal.kind === "duel") return legal.duel_values.includes(value);
  if (legal.kind === "attack") {
    const next = [...selectedValues(), value];
    return legal.attacks.some((attack) => subMultiset(next, attack));
  }
  return false; // defend: answered per attack card below
}

function answerComplete() {
  const req = state.request;
  if (!req || sending) return false;
  const legal = req.legal;
  if (legal.kind === "replace") return selected.length <= legal.max_replace;
  if (legal.kind === "duel") return selected.length === 1;
  if (legal.kind === "attack") return legal.attacks.some((a) => sameMultiset(selectedValues(), a));
  return answers.length === legal.defence.length && answers.every((a) => a !== undefined);
}

function chosenAction() {
  const kind = state.request.legal.kind;
  if (kind === "defend") return { kind, answers: answers.map((a) => (a === "sacrifice" ? null : a)) };
  return { kind, cards: selectedValues() };
}

function playLabel() {
  const req = state.request;
  if (!req) return "Play";
  const kind = req.legal.kind;
  if (kind === "replace") return selected.length ? `Replace ${cards(selectedValues())}` : "Keep my hand";
  if (kind === "duel") return selected.length ? `Duel with ${selectedValues()[0]}` : "Duel";
  if (kind === "attack") return selected.length ? `Attack with ${cards(selectedValues())}` : "Attack";
  return "Defend";
}

function prompt() {
  const req = state.request;
  if (!req) return "";
  const legal = req.legal;
  if (legal.kind === "replace") {
    return legal.max_replace
      ? `Choose up to ${legal.max_replace} card(s) to discard and redraw, or keep your hand.`
      : "You may not discard here: keep your hand.";
  }
  if (legal.kind === "duel") return "Choose one card for the duel: the higher card attacks first.";
  if (legal.kind === "attack") return "Attack with one card, a set (equal cards) or a sequence (3+ consecutive), never your last card.";
  return "Answer each attack card with an equal or higher card, or sacrifice (you lose your lowest card not used).";
}

function render() {
  const s = state;
  $("matchup").textContent = `You${s.seat === null ? "" : ` (seat ${s.seat})`} against ${s.opponent}` +
    (s.game ? ` — game ${s.game} of ${s.games}` : "");
  const view = s.view;
  if (s.finished) {
    $("turn").textContent = "The match is over.";
  } else if (s.twin === "offered") {
    $("turn").textContent = "The game is over: play the twin game?";
  } else if (s.ended) {
    $("turn").textContent = `Game ${s.game} is over: ${s.ended.result}.`;
  } else if (s.request) {
    $("turn").textContent = `Your turn: ${s.request.kind}.`;
  } else if (view) {
    $("turn").textContent = `${s.opponent}'s turn…`;
  }
  $("message").textContent = s.notice && s.notice.startsWith("you played") ? "" : (s.notice || "");
  renderBoard(view);
  renderHand(view);
  renderLog(view);
  renderResults();
  $("twin").hidden = s.twin !== "offered";
  tick();
}

function renderBoard(view) {
  const board = $("board");
  board.replaceChildren();
  if (!view) return;
  const last = view.spaces + 1;
  for (let position = 0; position <= last; position++) {
    const li = document.createElement("li");
    const goal = position === 0 || position === last;
    const owner = position === 0 ? 0 : 1;
    let label;
    if (goal) {
      label = `${owner === view.seat ? "Your" : "The bot's"} goal`;
      li.className = "goal";
    } else {
      const arrows = view.arrows[position - 1];
      const arrowText = arrows.length === 2 ? "⇅" : (arrows[0] === view.seat ? "▲" : "▼");
      label = `Space ${position}, ${view.hand_sizes[position - 1]} cards`;
      li.textContent = "";
      const size = document.createElement("span");
      size.className = "size";
      size.textContent = view.hand_sizes[position - 1];
      const arrow = document.createElement("span");
      arrow.className = "arrow";
      arrow.textContent = arrowText;
      arrow.title = arrows.length === 2 ? "both replace at once" : `${seatName(arrows[0])} replace first`;
      li.append(size, arrow);
      if (view.covered[position]) {
        li.classList.add("covered");
        label += ", covered";
      }
      label += arrows.length === 2 ? ", both replace at once" : `, ${seatName(arrows[0])} replace first`;
    }
    if (goal) li.textContent = owner === view.seat ? "You" : "Bot";
    if (position === view.tacocat) {
      li.classList.add("tacocat");
      label += ", the Tacocat is here";
      const cat = document.createElement("span");
      cat.className = "cat";
      cat.textContent = "🐱";
      cat.setAttribute("aria-hidden", "true");
      li.append(cat);
    }
    li.setAttribute("aria-label", label);
    board.append(li);
  }
  const goal = view.seat === 0 ? 0 : last;
  const away = Math.abs(view.tacocat - goal);
  $("board-help").textContent = `Bring the Tacocat to your goal, the ${goal === 0 ? "left" : "right"} end ` +
    `(each space shows how many cards are dealt there). It is ${plural(away, "space")} from it.`;
  $("opponent-hand").textContent = plural(view.opponent_hand_size, "card");
  $("draw-pile").textContent = plural(view.draw_pile_size, "card");
  $("round").textContent = `${view.round}`;
  $("discards").textContent = cards(view.discards);
  $("attack-line").textContent = view.current_attack && view.current_attack.length
    ? `${state.opponent} attacks with ${cards(view.current_attack)}.` : "";
}

function renderHand(view) {
  const hand = $("hand");
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.index : undefined;
  hand.replaceChildren();
  $("defence").replaceChildren();
  $("choices").replaceChildren();
  $("prompt").textContent = prompt();
  if (!view) return;
  view.hand.forEach((value, index) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "card";
    button.textContent = value;
    button.dataset.index = index;
    const on = selected.includes(index);
    const enabled = cardEnabled(index);
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.setAttribute("aria-disabled", enabled ? "false" : "true");
    button.setAttribute("aria-label", `card ${value}${on ? ", chosen" : ""}${enabled ? "" : ", not playable now"}`);
    button.tabIndex = -1;
    button.addEventListener("click", () => toggle(index));
    hand.append(button);
  });
  const buttons = [...hand.children];
  const start = buttons.find((b) => b.dataset.index === focused) ||
    buttons.find((b) => b.getAttribute("aria-disabled") === "false") || buttons[0];
  if (start) start.tabIndex = 0;
  if (focused !== undefined && start && hand.contains(start) && document.activeElement === document.body) start.focus();
  const req = state.request;
  $("choices-help").hidden = !(req && req.legal.kind === "attack" && req.legal.attacks.length);
  if (req && req.legal.kind === "attack") {
    for (const attack of req.legal.attacks) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "choice";
      b.textContent = attack.join(" ");
      b.setAttribute("aria-label", `choose the attack ${attack.join(" ")}`);
      b.addEventListener("click", () => chooseAttack(attack));
      $("choices").append(b);
    }
  }
  if (req && req.legal.kind === "defend") renderDefence(view, req.legal);
  const play = $("play");
  play.textContent = playLabel();
  play.disabled = !answerComplete();
}

function renderDefence(view, legal) {
  const box = $("defence");
  legal.defence.forEach((values, i) => {
    const row = document.createElement("div");
    row.className = "defend-row";
    row.setAttribute("role", "radiogroup");
    const attackCard = view.current_attack[i];
    row.setAttribute("aria-label", `answer to attack card ${attackCard}`);
    const label = document.createElement("span");
    label.textContent = `Against ${attackCard}:`;
    row.append(label);
    const used = counts(answers.filter((a, j) => j !== i && a !== "sacrifice" && a !== undefined));
    const have = counts(view.hand);
    for (const option of [...values, "sacrifice"]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = option === "sacrifice" ? "choice sacrifice" : "card small";
      b.textContent = option === "sacrifice" ? "sacrifice" : option;
      const free = option === "sacrifice" || (have.get(option) || 0) > (used.get(option) || 0);
      const on = answers[i] === option;
      b.setAttribute("role", "radio");
      b.setAttribute("aria-checked", on ? "true" : "false");
      b.setAttribute("aria-disabled", free && !sending ? "false" : "true");
      b.setAttribute("aria-label", option === "sacrifice" ? `sacrifice against ${attackCard}` : `defend ${attackCard} with ${option}`);
      b.addEventListener("click", () => {
        if (!free || sending) return;
        answers[i] = option;
        render();
      });
      row.append(b);
    }
    box.append(row);
  });
}

function renderLog(view) {
  const log = $("log");
  log.replaceChildren();
  const past = $("past");
  past.replaceChildren();
  if (!view) return;
  for (const ev of view.events) {
    const li = document.createElement("li");
    li.textContent = describe(ev);
    log.append(li);
  }
  for (const r of view.past_rounds) {
    const li = document.createElement("li");
    li.textContent = `Round ${r.round}: ` + (r.winner === null ? "tie" : `${seatName(r.winner)} won`) +
      ` (showdown: you ${r.showdown[state.seat]}, ${state.opponent} ${r.showdown[1 - state.seat]}); the Tacocat from position ${r.tacocat_from} to ${r.tacocat_to}`;
    past.append(li);
  }
  $("past-none").hidden = view.past_rounds.length > 0;
}

function renderResults() {
  const body = $("results").tBodies[0];
  body.replaceChildren();
  state.results.forEach((r, i) => {
    const tr = document.createElement("tr");
    for (const text of [`${i + 1}`, `${r.seat}`, r.result, r.reason + (r.detail ? `: ${r.detail}` : ""), `${r.rounds}`]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    body.append(tr);
  });
  $("results").hidden = state.results.length === 0;
  $("results-none").hidden = state.results.length > 0;
  // The pair's score is the relay's (relay.pair_score), not counted again here.
  $("pair-score").textContent = state.pair_points === null || state.pair_points === undefined ? ""
    : `Duplicate pair: ${state.pair_points} of 2 points (the same deal from both seats, so the luck of the deal cancels out).`;
}

function toggle(index) {
  if (!cardEnabled(index)) return;
  const kind = state.request.legal.kind;
  if (selected.includes(index)) {
    selected = selected.filter((i) => i !== index);
  } else if (kind === "duel") {
    selected = [index];
  } else {
    selected = [...selected, index];
  }
  render();
  const again = [...$("hand").children].find((b) => b.dataset.index === `${index}`);
  if (again) again.focus();
}

function chooseAttack(attack) {
  if (!state.request || sending) return;
  const left = [...attack];
  selected = [];
  state.view.hand.forEach((value, index) => {
    const at = left.indexOf(value);
    if (at >= 0) {
      left.splice(at, 1);
      selected.push(index);
    }
  });
  render();
  $("play").focus();
}

async function send() {
  if (!answerComplete()) return;
  const body = { request_id: state.request.id, action: chosenAction() };
  sending = true;
  render();
  try {
    const response = await fetch("action", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const reply = await response.json();
    if (!response.ok) $("message").textContent = reply.error || "the answer was refused";
  } catch (error) {
    $("message").textContent = `could not send the answer: ${error}`;
  } finally {
    sending = false;
    render(); // the next state may have come while the answer was on its way
  }
}

async function twin(accept) {
  const response = await fetch("twin", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ accept }),
  });
  if (!response.ok) $("message").textContent = (await response.json()).error;
}

function tick() {
  const clock = $("clock");
  if (!state || !state.request || state.request.deadline === null) {
    clock.textContent = state && state.request ? "no clock" : "";
    return;
  }
  const left = Math.max(0, state.request.deadline - (Date.now() / 1000 + clockOffset));
  clock.textContent = `${Math.floor(left / 60)}:${String(Math.floor(left % 60)).padStart(2, "0")} left`;
  clock.classList.toggle("low", left < 15);
}

function onKey(event) {
  const group = event.target.closest && event.target.closest("#hand, #choices, .defend-row");
  if (!group || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"].includes(event.key)) return;
  const buttons = [...group.querySelectorAll("button")];
  let at = buttons.indexOf(event.target);
  if (event.key === "Home") at = 0;
  else if (event.key === "End") at = buttons.length - 1;
  else at = (at + (event.key === "ArrowLeft" || event.key === "ArrowUp" ? -1 : 1) + buttons.length) % buttons.length;
  buttons.forEach((b) => { b.tabIndex = -1; });
  buttons[at].tabIndex = 0;
  buttons[at].focus();
  event.preventDefault();
}

function start() {
  $("play").addEventListener("click", send);
  $("clear").addEventListener("click", () => { selected = []; answers = []; render(); });
  $("twin-yes").addEventListener("click", () => twin(true));
  $("twin-no").addEventListener("click", () => twin(false));
  document.addEventListener("keydown", onKey);
  const events = new EventSource("events");
  events.addEventListener("state", (message) => {
    const next = JSON.parse(message.data);
    clockOffset = next.now - Date.now() / 1000;
    const previous = state && state.request ? state.request.id : null;
    state = next;
    if (!next.request || next.request.id !== previous) {
      selected = [];
      answers = [];
    }
    render();
    if (next.request && next.request.id !== previous) {
      const first = $("hand").querySelector("button[tabindex='0']");
      if (first) first.focus();
    }
    if (next.finished) events.close();
  });
  setInterval(tick, 500);
}

document.addEventListener("DOMContentLoaded", start);
