// The organizer's desk: every request carries the organizer's token as a bearer token (as
// the organizer's API wants); the token lives in this tab's sessionStorage, never a cookie.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var KEY = "tacocat-organizer-token";
  // A hosted version's actions (web/organizer.py): POST /api/submissions/PLAYER/N/ACTION.
  var VERSION_ACTIONS = ["suspend", "reinstate", "activate"];
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
    $("desk").textContent = "";  // the next sign-in draws it afresh
    $("sign-in").hidden = false;
    say(text, true);
  }

  // A part the organizer is using: a field with focus, or one holding what was typed.
  function inUse(part) {
    var active = document.activeElement;
    if (active && part.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) {
      return true;
    }
    return Array.prototype.some.call(part.querySelectorAll("input, select, textarea"),
      function (field) { return field.value !== field.defaultValue; });
  }

  // The desk is drawn once; after that only its figures (the parts marked data-live) are
  // swapped, one by one, and never one in use, so a form keeps its text and its focus.  A
  // button that had focus in a swapped part gets it back in the new one.
  function update(html) {
    var desk = $("desk");
    desk.setAttribute("data-refreshes", String(Number(desk.getAttribute("data-refreshes")) + 1));
    if (!desk.querySelector("[data-live]")) {
      desk.innerHTML = html;
      if (window.tacocatArena) { window.tacocatArena.prepare(desk); }
      return;
    }
    var fresh = document.createElement("template");
    fresh.innerHTML = html;
    fresh.content.querySelectorAll("[data-live]").forEach(function (part) {
      var old = document.getElementById(part.id);
      if (!old || inUse(old)) { return; }
      var active = document.activeElement;
      var key = active && old.contains(active) ? buttonKey(active) : null;
      old.replaceWith(part);
      if (window.tacocatArena) { window.tacocatArena.prepare(part); }
      var again = key && part.querySelector(key);
      if (again) { again.focus(); }
    });
  }

  function buttonKey(element) {
    var action = element.getAttribute("data-action");
    if (!action) { return null; }
    var name = element.getAttribute("data-name");
    return "button[data-action='" + action + "']" +
      (name === null ? "" : "[data-name='" + CSS.escape(name) + "']");
  }

  function refresh() {
    return call("GET", "/admin/sections").then(function (response) {
      if (response.status === 401) { signedOut("That is not the organizer's token."); return; }
      return response.text().then(function (html) {
        update(html);
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
        if (response.status === 201) {
          showToken(answer.name, answer.token);
          $("new-name").value = "";
          say("", false);
        }
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
    var name = button.getAttribute("data-name");
    if (action === "revoke" && !window.confirm("Revoke " + name + "? Its token stops " +
        "working, its session ends and its hosted versions stop playing. This cannot be " +
        "undone: only adding it again gives it a new token.")) {
      say("Nothing revoked.", false);
      return;
    }
    var body = {};
    var path = "/api/" + action;
    if (action === "revoke") {
      path = "/api/players/" + encodeURIComponent(name) + "/revoke";
    } else if (VERSION_ACTIONS.indexOf(action) >= 0) {
      if (action === "suspend") {
        var reason = window.prompt("Suspend " + name + "? It stops playing at once. Why " +
          "(shown to its player)?", "");
        if (reason === null) { say("Nothing suspended.", false); return; }
        body = { reason: reason };
      }
      path = "/api/submissions/" + encodeURIComponent(button.getAttribute("data-player")) +
        "/" + encodeURIComponent(button.getAttribute("data-version")) + "/" + action;
    }
    call("POST", path, body).then(function (response) {
      return response.json().then(function (answer) {
        var done = answer.bot && answer.status ? answer.bot + " is now " + answer.status + "." : "";
        say(answer.error || done, Boolean(answer.error));
        return refresh();
      });
    });
  });

  if (sessionStorage.getItem(KEY)) { refresh(); }
})();
