// evalhouse explorer: search and filter the index, fold a family's derivatives, sort any table by
// a column. Pages are complete without this script; it only hides, shows and reorders rows that
// are already there.
(function () {
  "use strict";
  // the same words as the site's search_text: -, _, /, spaces and the like separate words
  var words = function (text) {
    return text.toLowerCase().split(/[\s\-_/|=:,;()]+/).filter(Boolean);
  };
  var $ = function (id) { return document.getElementById(id); };
  var q = $("q");
  var models = $("model-list");
  if (q && models) {
    var hits = $("hits");
    var body = models.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);  // the index's own order: families grouped
    var open = {};  // families whose derivatives are unfolded (by family id)
    var filters = ["f-family", "f-developer", "f-from", "f-to", "f-open"].map($);
    // a fold button on the first row of the line each family's derivatives follow
    rows.forEach(function (head) {
      var family = head.getAttribute("data-fold-head");
      if (family === null) { return; }
      var n = head.getAttribute("data-folded");
      var label = function () { return (open[family] ? "− " : "+ ") + n + " derivative" + (n === "1" ? "" : "s"); };
      var button = document.createElement("button");
      button.type = "button";
      button.className = "fold";
      button.setAttribute("aria-expanded", "false");
      button.title = "models of the " + family + " family by other developers";
      button.textContent = label();
      button.addEventListener("click", function () {
        open[family] = !open[family];
        button.setAttribute("aria-expanded", open[family] ? "true" : "false");
        button.textContent = label();
        update();
      });
      head.querySelector("td.model-cell").appendChild(button);
    });
    var month = function (value) { return value ? value + "-00" : ""; };
    var passes = function (row, f) {
      var date = row.getAttribute("data-date");
      return (!f.family || row.getAttribute("data-family") === f.family) &&
        (!f.developer || row.getAttribute("data-developer") === f.developer) &&
        (!f.from || (date && date >= month(f.from))) &&
        (!f.to || (date && date.slice(0, 7) <= f.to)) &&
        (!f.open || row.getAttribute("data-open") === f.open);
    };
    // 0 an exact name; 1 an own release whose name starts with the query, 2 one containing it;
    // 3, 4 the same for derivatives; -1 no match
    var tier = function (row, query, tokens) {
      var text = row.getAttribute("data-search");
      if (!tokens.every(function (t) { return text.indexOf(t) >= 0; })) { return -1; }
      var names = row.getAttribute("data-names").split("|");
      if (names.indexOf(query) >= 0) { return 0; }
      var starts = names.some(function (n) { return n.indexOf(query) === 0; });
      var official = row.getAttribute("data-official") === "1";
      return (official ? 1 : 3) + (starts ? 0 : 1);
    };
    var update = function () {
      var tokens = words(q.value);
      var query = tokens.join(" ");
      var f = {
        family: filters[0].value.trim(), developer: filters[1].value.trim(),
        from: filters[2].value, to: filters[3].value, open: filters[4].value
      };
      var filtering = Object.keys(f).some(function (k) { return f[k]; });
      var shown = [];
      rows.forEach(function (row) {
        var t = tokens.length ? tier(row, query, tokens) : 1;
        var ok = t >= 0 && passes(row, f);
        if (ok && !tokens.length && !filtering && row.classList.contains("derivative")) {
          ok = !!open[row.getAttribute("data-fold")];  // browsing: derivatives stay folded
        }
        row.hidden = !ok;
        if (ok) { shown.push({ row: row, tier: t, rank: +row.getAttribute("data-rank") }); }
      });
      models.classList.toggle("searching", !!(tokens.length || filtering));
      if (tokens.length || filtering) {  // a flat list, best match first
        shown.sort(function (a, b) { return a.tier - b.tier || a.rank - b.rank; });
        shown.forEach(function (s) { body.appendChild(s.row); });
      } else {
        rows.forEach(function (r) { body.appendChild(r); });
      }
      document.querySelectorAll("table.searchable:not(#model-list) tbody tr").forEach(function (row) {
        var text = row.getAttribute("data-search") || row.textContent.toLowerCase();
        row.hidden = !tokens.every(function (t) { return text.indexOf(t) >= 0; });
      });
      hits.textContent = tokens.length || filtering ? shown.length + " model" + (shown.length === 1 ? "" : "s") : "";
    };
    q.addEventListener("input", update);
    filters.forEach(function (el) { el.addEventListener("input", update); el.addEventListener("change", update); });
    $("f-clear").addEventListener("click", function () {
      filters.forEach(function (el) { el.value = ""; });
      update();
    });
    var initial = new URLSearchParams(window.location.search).get("q");
    if (initial) { q.value = initial; }
    update();
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
