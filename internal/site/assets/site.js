// benchline leaderboard: sorting, filtering, and the paged, searchable
// sample lists. No framework and no network: data pages are scripts beside
// the page (data/<key>/pNNNN.js) that call benchline.page(...), so the site
// works from file:// too. Text from models only ever goes into textContent.
"use strict";
var benchline = (function () {
  var pages = {};    // key -> {n: rows}
  var waiting = {};  // key/n -> [resolve, reject]

  function page(key, n, rows) {
    (pages[key] = pages[key] || {})[n] = rows;
    var w = waiting[key + "/" + n];
    if (w) { delete waiting[key + "/" + n]; w.forEach(function (f) { f[0](rows); }); }
  }

  function load(base, key, n) {
    if (pages[key] && pages[key][n]) return Promise.resolve(pages[key][n]);
    var k = key + "/" + n;
    return new Promise(function (resolve, reject) {
      if (waiting[k]) { waiting[k].push([resolve, reject]); return; }
      waiting[k] = [[resolve, reject]];
      var s = document.createElement("script");
      s.src = base + String(n).padStart(4, "0") + ".js";
      s.onerror = function () {
        var w = waiting[k] || [];
        delete waiting[k];
        w.forEach(function (f) { f[1](new Error("cannot load " + s.src)); });
      };
      document.head.appendChild(s);
    });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function num(x) { return x === null || x === undefined ? "–" : Number(x).toFixed(3); }

  // Sorting: header buttons toggle aria-sort; cells sort by data-sort.
  function sortValue(cell) {
    if (!cell) return "";
    var v = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    return v;
  }
  function sortTable(table, col, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var vals = rows.map(function (r) { return sortValue(r.cells[col]); });
    var numeric = vals.every(function (v) { return v === "" || !isNaN(Number(v)); });
    var idx = rows.map(function (r, i) { return i; });
    idx.sort(function (a, b) {
      var x = vals[a], y = vals[b];
      if (x === "" && y !== "") return 1;   // empty cells last either way
      if (y === "" && x !== "") return -1;
      var c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return (dir === "ascending" ? c : -c) || a - b;
    });
    idx.forEach(function (i) { body.appendChild(rows[i]); });
  }
  function initSort(table) {
    var ths = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(ths, function (th, col) {
      var b = th.querySelector("button.sort");
      if (!b) return;
      b.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
        Array.prototype.forEach.call(ths, function (o) { if (o.hasAttribute("aria-sort")) o.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", dir);
        sortTable(table, col, dir);
      });
    });
  }

  // Filtering: rows whose text does not hold the query are hidden.
  function initFilter(input) {
    var table = document.getElementById(input.getAttribute("data-table"));
    if (!table) return;
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  }

  // Renderers of one item of a paged list.
  var render = {
    samples: function (s) {
      var a = el("article", "sample");
      a.setAttribute("data-id", s.id);
      a.appendChild(el("h3", null, "#" + s.i + " " + s.id + (s.cat ? " · " + s.cat : "")));
      var v = el("p", "verdict");
      var names = Object.keys(s.metrics || {}).sort();
      v.textContent = "score " + num(s.score) + (names.length ? " (" + names.map(function (k) { return k + " " + num(s.metrics[k]); }).join(", ") + ")" : "") +
        " · " + s.tokens + " tokens · " + Math.round(s.ms) + " ms";
      a.appendChild(v);
      if (s.err) a.appendChild(el("p", "err", "error " + s.err + (s.msg ? ": " + s.msg : "")));
      if (s.prompt) {
        var q = el("details");
        q.appendChild(el("summary", null, "Dataset row (what the prompt is built from)"));
        q.appendChild(el("pre", "prompt", s.prompt));
        a.appendChild(q);
      }
      a.appendChild(el("h4", null, "Response"));
      a.appendChild(el("pre", "resp", s.resp));
      if (s.details) {
        var d = el("details");
        d.appendChild(el("summary", null, "Details (judge replies, sandbox output, …)"));
        d.appendChild(el("pre", "details", s.details));
        a.appendChild(d);
      }
      return a;
    },
    compare: function (p) {
      var r = el("tr");
      r.setAttribute("data-id", p.id);
      var th = el("th", null, "#" + p.i + " " + p.id);
      th.setAttribute("scope", "row");
      r.appendChild(th);
      r.appendChild(el("td", null, p.cat));
      r.appendChild(el("td", "num", num(p.a) + (p.ea ? " (" + p.ea + ")" : "")));
      r.appendChild(el("td", "num", num(p.b) + (p.eb ? " (" + p.eb + ")" : "")));
      r.appendChild(el("td", "num diff", p.d === null || p.d === undefined ? "–" : (p.d > 0 ? "+" : "") + num(p.d)));
      return r;
    }
  };

  function text(item) {
    return JSON.stringify(item).toLowerCase();
  }

  function initPager(sec) {
    var key = sec.getAttribute("data-key"), base = sec.getAttribute("data-base");
    var kind = sec.getAttribute("data-kind");
    var npages = Number(sec.getAttribute("data-pages")), total = Number(sec.getAttribute("data-total"));
    var size = Number(sec.getAttribute("data-size")) || 50;
    var items = sec.querySelector(".items"), status = sec.querySelector(".status");
    var prev = sec.querySelector(".prev"), next = sec.querySelector(".next"), where = sec.querySelector(".where");
    var search = sec.querySelector("input.search");
    var api = sec.getAttribute("data-api"), sortSel = sec.querySelector("select.sort");
    var state = {page: 1, query: "", matches: null, token: 0};
    var container = items;
    if (kind === "compare") {
      var wrap = el("div", "table-wrap"), table = el("table", "pairs"), head = el("thead"), tr = el("tr");
      ["Sample", "Category", "A", "B", "A − B"].forEach(function (h) { var c = el("th", null, h); c.setAttribute("scope", "col"); tr.appendChild(c); });
      head.appendChild(tr); table.appendChild(head);
      container = el("tbody"); table.appendChild(container); wrap.appendChild(table); items.appendChild(wrap);
    }
    function show(rows, pageNo, pageCount, what) {
      container.textContent = "";
      rows.forEach(function (r) { container.appendChild(render[kind](r)); });
      where.textContent = pageCount ? "page " + pageNo + " of " + pageCount : "";
      prev.disabled = pageNo <= 1;
      next.disabled = pageNo >= pageCount;
      status.textContent = what;
    }
    // A list above the static site's size is served: every page, sort
    // and search is a request to the explorer (docs/site.md).
    function drawServed() {
      var t = ++state.token;
      if (location.protocol === "file:") {
        show([], 0, 0, "Opened from disk: these " + total + " samples are listed by `benchline leaderboard serve`.");
        return Promise.resolve();
      }
      var url = api + "&offset=" + (state.page - 1) * size + "&limit=" + size +
        "&sort=" + encodeURIComponent(sortSel ? sortSel.value : "index") + "&q=" + encodeURIComponent(state.query);
      status.textContent = state.query ? "Searching…" : "Loading…";
      return fetch(url).then(function (r) {
        if (!r.ok) return r.text().then(function (m) { throw new Error(m || r.statusText); });
        return r.json();
      }).then(function (doc) {
        if (t !== state.token) return;
        var pc = Math.max(1, Math.ceil(doc.matched / size)), first = doc.offset + 1;
        show(doc.items, state.page, pc, state.query ?
          doc.matched + " of " + doc.total + " match “" + state.query + "”." :
          "Showing " + first + "–" + (first + doc.items.length - 1) + " of " + doc.total + ".");
      }, function (e) { if (t === state.token) status.textContent = e.message; });
    }
    function draw() {
      if (api) return drawServed();
      var t = ++state.token;
      if (state.matches) {
        var pc = Math.max(1, Math.ceil(state.matches.length / size));
        var from = (state.page - 1) * size;
        show(state.matches.slice(from, from + size), state.page, pc,
          state.matches.length + " of " + total + " match “" + state.query + "”.");
        return Promise.resolve();
      }
      if (npages === 0) { show([], 0, 0, "Nothing to show."); return Promise.resolve(); }
      return load(base, key, state.page).then(function (rows) {
        if (t !== state.token) return;
        var first = (state.page - 1) * size + 1;
        show(rows, state.page, npages, "Showing " + first + "–" + (first + rows.length - 1) + " of " + total + ".");
      }, function (e) { status.textContent = e.message; });
    }
    function runSearch() {
      var q = search.value.trim().toLowerCase();
      state.query = search.value.trim();
      state.page = 1;
      if (!q || api) { state.matches = null; return draw(); }
      var t = ++state.token;
      status.textContent = "Searching…";
      var found = [], n = 1;
      function step() {
        if (t !== state.token) return Promise.resolve();
        if (n > npages) { state.matches = found; return draw(); }
        return load(base, key, n).then(function (rows) {
          rows.forEach(function (r) { if (text(r).indexOf(q) >= 0) found.push(r); });
          n++;
          return step();
        });
      }
      return step().catch(function (e) { status.textContent = e.message; });
    }
    var timer = null;
    search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(runSearch, 150); });
    search.addEventListener("keydown", function (e) { if (e.key === "Enter") { e.preventDefault(); clearTimeout(timer); runSearch(); } });
    if (sortSel) sortSel.addEventListener("change", function () { state.page = 1; draw(); });
    prev.addEventListener("click", function () { if (state.page > 1) { state.page--; draw(); } });
    next.addEventListener("click", function () { state.page++; draw(); });
    draw();
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), initSort);
    Array.prototype.forEach.call(document.querySelectorAll("input.filter"), initFilter);
    Array.prototype.forEach.call(document.querySelectorAll("section.pager"), initPager);
  });

  return {page: page};
})();
