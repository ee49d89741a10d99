// evalhouse explorer: search the index lists, sort any table by a column. Pages are complete
// without this script; it only filters and reorders rows that are already there.
(function () {
  "use strict";
  var q = document.getElementById("q");
  if (q) {
    var hits = document.getElementById("hits");
    var filter = function () {
      var words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      document.querySelectorAll("table.searchable tbody tr").forEach(function (row) {
        var text = row.getAttribute("data-search") || row.textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      hits.textContent = words.length ? shown + " match" + (shown === 1 ? "" : "es") : "";
    };
    q.addEventListener("input", filter);
    var initial = new URLSearchParams(window.location.search).get("q");
    if (initial) { q.value = initial; filter(); }
  }
  var key = function (cell) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null) { raw = cell.textContent.trim(); }
    var n = parseFloat(raw.replace(/,/g, ""));
    return isNaN(n) || !/^[-+]?[\d.,]+(e[-+]?\d+)?$/i.test(raw.replace(/\s/g, "")) ? { n: null, s: raw.toLowerCase() } : { n: n, s: raw };
  };
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.setAttribute("tabindex", "0");
      var sort = function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var c = (x.n !== null && y.n !== null) ? x.n - y.n : (x.n !== null ? -1 : (y.n !== null ? 1 : x.s.localeCompare(y.s)));
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
  });
})();
