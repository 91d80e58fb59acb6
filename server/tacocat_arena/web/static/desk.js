// The organizer's desk: every request carries the organizer's token as a bearer token (as
// the organizer's API wants); the token lives in this tab's sessionStorage, never a cookie.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var KEY = "tacocat-organizer-token";
  var timer = null;

  function say(text, failed) {
    $("desk-message").textContent = text;
    $("desk-message").className = failed ? "fail" : "muted";
  }

  function call(method, path, body) {
    var token = sessionStorage.getItem(KEY) || "";
    return fetch(path, {
      method: method,
      headers: { "Authorization": "Bearer " + token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body)
    });
  }

  function signedOut(text) {
    sessionStorage.removeItem(KEY);
    if (timer !== null) { clearInterval(timer); timer = null; }
    $("desk").hidden = true;
    $("sign-in").hidden = false;
    say(text, true);
  }

  function refresh() {
    return call("GET", "/admin/sections").then(function (response) {
      if (response.status === 401) { signedOut("That is not the organizer's token."); return; }
      return response.text().then(function (html) {
        var kept = $("new-token") ? $("new-token").innerHTML : "";
        $("desk").innerHTML = html;
        if (kept) { $("new-token").innerHTML = kept; }
        $("desk").hidden = false;
        $("sign-in").hidden = true;
        if (timer === null) { timer = setInterval(refresh, 3000); }
      });
    });
  }

  function showToken(name, token) {
    var box = $("new-token");
    box.textContent = "";
    var p = document.createElement("p");
    p.className = "shown-once";
    p.textContent = "Player " + name + " added. Its token, shown only now (give it to its author): ";
    var code = document.createElement("code");
    code.id = "token-shown";
    code.textContent = token;
    p.appendChild(code);
    box.appendChild(p);
  }

  $("sign-in").addEventListener("submit", function (event) {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("token").value.trim());
    $("token").value = "";
    say("", false);
    refresh();
  });

  $("desk").addEventListener("submit", function (event) {
    if (event.target.id !== "add-player") { return; }
    event.preventDefault();
    var name = $("new-name").value.trim();
    call("POST", "/api/players", { name: name }).then(function (response) {
      return response.json().then(function (answer) {
        if (response.status === 201) { showToken(answer.name, answer.token); say("", false); }
        else { say(answer.error || ("could not add " + name), true); }
        return refresh();
      });
    });
  });

  $("desk").addEventListener("click", function (event) {
    var button = event.target.closest("button[data-action]");
    if (!button) { return; }
    var action = button.getAttribute("data-action");
    if (action === "sign-out") { signedOut("Signed out."); return; }
    var path = action === "revoke"
      ? "/api/players/" + encodeURIComponent(button.getAttribute("data-name")) + "/revoke"
      : "/api/" + action;
    call("POST", path, {}).then(function (response) {
      return response.json().then(function (answer) {
        say(answer.error || "", Boolean(answer.error));
        return refresh();
      });
    });
  });

  if (sessionStorage.getItem(KEY)) { refresh(); }
})();
