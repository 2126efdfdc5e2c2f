// fabdex contract browser: progressive enhancement only. Every page reads
// and works without this file.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $$(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function typing(e) {
    var t = e.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  }

  // Keyboard: "/" focuses the search box, j/k move through hits, Enter opens one.
  var current = -1;
  function hits() { return $$(".hit"); }
  function focusHit(i) {
    var list = hits();
    if (!list.length) return;
    current = Math.max(0, Math.min(list.length - 1, i));
    list.forEach(function (h, n) { h.classList.toggle("current", n === current); });
    var link = $("a.title", list[current]);
    if (link) link.focus();
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    if (e.key === "/") {
      var box = $("#q2") || $("#q");
      if (box) { e.preventDefault(); box.focus(); box.select(); }
    } else if (e.key === "j") { focusHit(current + 1); }
    else if (e.key === "k") { focusHit(current - 1); }
  });

  // The contract: a TypeScript / JSON Schema toggle instead of two open panels.
  $$(".views").forEach(function (views) {
    var toggle = $(".toggle", views);
    if (!toggle) return;
    toggle.hidden = false;
    $$("button", toggle).forEach(function (b) {
      b.addEventListener("click", function () {
        views.setAttribute("data-view", b.getAttribute("data-show"));
        $$("button", toggle).forEach(function (o) { o.setAttribute("aria-pressed", String(o === b)); });
      });
    });
  });

  // Copy the import snippet.
  $$("button[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var text = document.getElementById(b.getAttribute("data-copy")).textContent;
      var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, function () {});
    });
  });

  // Source viewer: #L10-L20 highlights a range; #Name reads that definition.
  function highlight() {
    var src = document.getElementById("source");
    if (!src) return;
    var m = /^#L(\d+)(?:-L?(\d+))?$/.exec(location.hash);
    $$("tr.hl", src).forEach(function (r) { r.classList.remove("hl"); });
    if (!m) {
      var name = decodeURIComponent(location.hash.slice(1));
      if (name && /^[A-Za-z_$][\w$]*$/.test(name) && !document.getElementById(name)) {
        var url = new URL(location.href);
        url.hash = ""; url.searchParams.delete("lines"); url.searchParams.delete("offset");
        url.searchParams.set("symbol", name);
        location.replace(url.toString());
      }
      return;
    }
    var a = +m[1], b = m[2] ? +m[2] : a, first = null;
    if (b < a) { var t = a; a = b; b = t; }
    for (var n = a; n <= b; n++) {
      var row = document.getElementById("L" + n);
      if (row) { row.classList.add("hl"); first = first || row; }
    }
    // Scroll only when the range's first line is out of view (below the sticky header).
    if (first) {
      var box = first.getBoundingClientRect();
      if (box.top < 64 || box.bottom > window.innerHeight) first.scrollIntoView({ block: "center" });
    }
  }
  window.addEventListener("hashchange", highlight);
  highlight();
  // Shift-click a line number to extend the range.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("td.ln a");
    if (!a || !e.shiftKey) return;
    var m = /^#L(\d+)/.exec(location.hash);
    if (!m) return;
    e.preventDefault();
    var n = +a.getAttribute("href").slice(2), s = +m[1];
    location.hash = "#L" + Math.min(s, n) + "-L" + Math.max(s, n);
  });

  // "Load more" without a reload: fetch the next page and splice it in.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a.more[data-more], a.more[data-more-rows]");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    a.textContent = "Loading…";
    fetch(a.href, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, "text/html");
      var rows = a.getAttribute("data-more-rows");
      if (rows) {
        var body = $("#" + rows + " tbody"), fresh = $$("#" + rows + " tbody tr", doc);
        fresh.forEach(function (tr) {
          var same = document.getElementById(tr.id);
          if (same) { $("code", same).textContent += $("code", tr).textContent; }
          else { body.appendChild(document.importNode(tr, true)); }
        });
        var next = $("a.more[data-more-rows]", doc);
        if (next) { a.href = next.href; a.textContent = "Load more"; } else { a.parentNode.remove(); }
      } else {
        var id = a.getAttribute("data-more"), mine = document.getElementById(id), theirs = doc.getElementById(id);
        var pos = hits().length;
        if (mine && theirs) mine.replaceWith(document.importNode(theirs, true));
        history.replaceState(null, "", a.href);
        focusHit(pos);
      }
    }).catch(function () { location.href = a.href; });
  });
})();
