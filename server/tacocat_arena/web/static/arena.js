// The arena's pages: live sections swapped in from the page's event stream, and tables
// sorted by a click (or Enter) on a column's heading; the chosen order survives updates.
(function () {
  "use strict";
  var order = {}; // table id -> [column index, direction]

  function sortTable(table) {
    var chosen = order[table.id];
    if (!chosen) { return; }
    var column = chosen[0], direction = chosen[1];
    var heading = table.tHead.rows[0].cells[column];
    var numeric = heading.getAttribute("data-sort") === "num";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (th.hasAttribute("data-sort")) {
        th.setAttribute("aria-sort", i === column ? direction : "none");
      }
    });
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).filter(function (r) {
      return r.cells.length > column && r.cells[column].hasAttribute("data-value");
    });
    rows.sort(function (a, b) {
      var x = a.cells[column].getAttribute("data-value");
      var y = b.cells[column].getAttribute("data-value");
      var diff = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return direction === "ascending" ? diff : -diff;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function makeSortable(root) {
    (root || document).querySelectorAll("table.sortable").forEach(function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
        var button = th.querySelector("button");
        if (!button || !th.hasAttribute("data-sort")) { return; }
        if (!th.hasAttribute("aria-sort")) { th.setAttribute("aria-sort", "none"); }
        button.addEventListener("click", function () {
          var was = order[table.id];
          var ascending = th.getAttribute("data-sort") === "text";
          var direction = was && was[0] === column
            ? (was[1] === "ascending" ? "descending" : "ascending")
            : (ascending ? "ascending" : "descending");
          order[table.id] = [column, direction];
          sortTable(table);
        });
      });
      sortTable(table);
    });
  }

  window.tacocatArena = { makeSortable: makeSortable };
  makeSortable(document);

  var source = document.body.getAttribute("data-stream");
  if (source) {
    var names = (document.body.getAttribute("data-sections") || "").split(" ");
    var stream = new EventSource(source);
    names.forEach(function (name) {
      stream.addEventListener(name, function (event) {
        var section = document.getElementById(name);
        if (!section) { return; }
        section.innerHTML = event.data;
        makeSortable(section);
      });
    });
  }
})();
