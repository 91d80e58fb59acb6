// The arena's form that challenges a bot: POST /api/human/challenges with the player's
// token, then open the game's page; below, the people's games (GET /api/human/games).
"use strict";

async function load() {
  const response = await fetch("/api/human/games");
  const data = await response.json();
  const select = document.getElementById("opponent");
  for (const name of data.opponents) {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = name;
    select.append(option);
  }
  const body = document.querySelector("#history tbody");
  for (const game of data.games) {
    const tr = document.createElement("tr");
    for (const text of [game.number, game.player, game.opponent, game.result || (game.reason ? "-" : "in play"),
      game.games > 1 ? `${game.twin_result || "-"}${game.pair_points === null ? "" : ` (pair ${game.pair_points})`}` : "",
      game.reason, game.rounds]) {
      const td = document.createElement("td");
      td.textContent = `${text}`;
      tr.append(td);
    }
    body.append(tr);
  }
}

async function challenge(event) {
  event.preventDefault();
  const token = document.getElementById("token").value.trim();
  const opponent = document.getElementById("opponent").value;
  const pair = document.getElementById("pair").checked;
  const response = await fetch("/api/human/challenges", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ opponent, pair }),
  });
  const reply = await response.json();
  if (!response.ok) {
    document.getElementById("message").textContent = reply.error;
    return;
  }
  window.location.assign(reply.url);
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("challenge").addEventListener("submit", challenge);
  load();
});
