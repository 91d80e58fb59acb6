// The arena's pages: live sections swapped in from the page's event stream, tables sorted
// by a click (or Enter) on a column's heading, and on a narrow screen a table's less
// important columns (class "extra") behind a "Show all columns" toggle; the chosen order
// and the toggle's state survive updates.
(function () {
  "use strict";
  var order = {}; // table id -> [column index, direction]
  var expanded = {}; // table id -> true once its extra columns are shown

  function columns(root) {
    (root || document).querySelectorAll("button.columns-toggle").forEach(function (button) {
      var table = document.getElementById(button.getAttribute("aria-controls"));
      if (!table) { return; }
      var open = Boolean(expanded[table.id]);
      table.classList.toggle("all-columns", open);
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show fewer columns" : "Show all columns";
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.columns-toggle");
    if (!button) { return; }
    var id = button.getAttribute("aria-controls");
    expanded[id] = !expanded[id];
    columns(document);
  });

  // What a freshly drawn part of a page needs: its tables sorted and their columns shown
  // as the reader chose.
  function prepare(root) {
    makeSortable(root);
    columns(root);
  }

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

  window.tacocatArena = { makeSortable: makeSortable, prepare: prepare };
  prepare(document);

  var source = document.body.getAttribute("data-stream");
  if (source) {
    var names = (document.body.getAttribute("data-sections") || "").split(" ");
    var stream = new EventSource(source);
    names.forEach(function (name) {
      stream.addEventListener(name, function (event) {
        var section = document.getElementById(name);
        if (!section) { return; }
        section.innerHTML = event.data;
        prepare(section);
      });
    });
  }
})();
