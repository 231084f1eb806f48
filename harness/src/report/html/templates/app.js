"use strict";
// streamcheck report: filters the tables, opens a trial (#trial=<id>) or a comparison
// (#pair=<scenario>) from the JSON blocks of the page. Everything from the report data
// is put in the page with textContent, never parsed as HTML.
(function () {
  // ms from navigation until this script (the last element of the page) runs.
  var parsed = Math.round(performance.now());
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  // A block's data. A run page's trials are deflated and base64-encoded, and point into
  // the page's table of long strings ("\u0000N"), put back here.
  function data(id) {
    var node = document.getElementById(id);
    if (!node) return null;
    if (node.type !== "application/x-deflate-base64") return JSON.parse(node.textContent);
    return restore(unpack(node), sharedStrings());
  }
  function unpack(node) {
    var bin = atob(node.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return JSON.parse(new TextDecoder().decode(inflate(bytes)));
  }
  var strings = null;
  function sharedStrings() {
    if (!strings) {
      var node = document.getElementById("strings");
      strings = node ? unpack(node) : [];
    }
    return strings;
  }

  // Raw inflate (RFC 1951), after Mark Adler's puff.c.
  var LBASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
  var LEXT = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
  var DBASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
  var DEXT = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
  var ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  function huffman(lengths) {
    var count = new Uint16Array(16), offs = new Uint16Array(16), symbol = new Uint16Array(lengths.length), i;
    for (i = 0; i < lengths.length; i++) count[lengths[i]]++;
    count[0] = 0;
    for (i = 1; i < 16; i++) offs[i] = offs[i - 1] + count[i - 1];
    for (i = 0; i < lengths.length; i++) if (lengths[i]) symbol[offs[lengths[i]]++] = i;
    return { count: count, symbol: symbol };
  }
  function inflate(src) {
    var pos = 0, buf = 0, cnt = 0, out = new Uint8Array(src.length * 4 + 1024), n = 0;
    function bits(k) {
      while (cnt < k) {
        if (pos >= src.length) throw new Error("inflate: data ends early");
        buf |= src[pos++] << cnt; cnt += 8;
      }
      var v = buf & ((1 << k) - 1);
      buf >>>= k; cnt -= k;
      return v;
    }
    function room(k) {
      if (n + k <= out.length) return;
      var bigger = new Uint8Array(Math.max(out.length * 2, n + k));
      bigger.set(out.subarray(0, n));
      out = bigger;
    }
    function decode(h) {
      var code = 0, first = 0, index = 0;
      for (var len = 1; len < 16; len++) {
        code |= bits(1);
        var c = h.count[len];
        if (code - c < first) return h.symbol[index + (code - first)];
        index += c; first += c; first <<= 1; code <<= 1;
      }
      throw new Error("inflate: bad code");
    }
    function codes(lcode, dcode) {
      for (;;) {
        var sym = decode(lcode);
        if (sym < 256) { room(1); out[n++] = sym; continue; }
        if (sym === 256) return;
        sym -= 257;
        var len = LBASE[sym] + bits(LEXT[sym]);
        var d = decode(dcode);
        var dist = DBASE[d] + bits(DEXT[d]);
        room(len);
        for (var k = 0; k < len; k++, n++) out[n] = out[n - dist];
      }
    }
    var last, fixed = null, i;
    do {
      last = bits(1);
      var type = bits(2);
      if (type === 0) {
        buf = 0; cnt = 0;
        var len = src[pos] | (src[pos + 1] << 8);
        pos += 4;
        room(len);
        out.set(src.subarray(pos, pos + len), n);
        pos += len; n += len;
      } else if (type === 1) {
        if (!fixed) {
          var l = new Uint8Array(288);
          for (i = 0; i < 288; i++) l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
          fixed = [huffman(l), huffman(new Uint8Array(30).fill(5))];
        }
        codes(fixed[0], fixed[1]);
      } else if (type === 2) {
        var nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
        var cl = new Uint8Array(19);
        for (i = 0; i < ncode; i++) cl[ORDER[i]] = bits(3);
        var ccode = huffman(cl), lengths = new Uint8Array(nlen + ndist);
        for (i = 0; i < nlen + ndist;) {
          var sym = decode(ccode);
          if (sym < 16) { lengths[i++] = sym; continue; }
          var prev = 0, rep;
          if (sym === 16) { prev = lengths[i - 1]; rep = 3 + bits(2); }
          else if (sym === 17) rep = 3 + bits(3);
          else rep = 11 + bits(7);
          while (rep--) lengths[i++] = prev;
        }
        codes(huffman(lengths.subarray(0, nlen)), huffman(lengths.subarray(nlen)));
      } else throw new Error("inflate: bad block type");
    } while (!last);
    return out.subarray(0, n);
  }
  function restore(v, table) {
    if (typeof v === "string") return v.charCodeAt(0) === 0 ? table[+v.slice(1)] : v;
    if (Array.isArray(v)) return v.map(function (x) { return restore(x, table); });
    if (v && typeof v === "object") {
      Object.keys(v).forEach(function (k) { v[k] = restore(v[k], table); });
    }
    return v;
  }

  // Pretty JSON, one element per line, each line knowing its JSON path ($.a[0].b).
  function jsonLines(v, path, depth, key, last, out) {
    var pad = "  ".repeat(depth) + (key !== null ? JSON.stringify(key) + ": " : "");
    var comma = last ? "" : ",";
    if (v !== null && typeof v === "object") {
      var arr = Array.isArray(v);
      var keys = arr ? v.map(function (_, i) { return i; }) : Object.keys(v);
      if (!keys.length) { out.push({ t: pad + (arr ? "[]" : "{}") + comma, p: path }); return; }
      out.push({ t: pad + (arr ? "[" : "{"), p: path });
      keys.forEach(function (k, i) {
        var sub = arr ? path + "[" + k + "]" : path + "." + k;
        jsonLines(v[k], sub, depth + 1, arr ? null : k, i === keys.length - 1, out);
      });
      out.push({ t: "  ".repeat(depth) + (arr ? "]" : "}") + comma, p: path, close: true });
    } else {
      out.push({ t: pad + JSON.stringify(v) + comma, p: path });
    }
  }
  // marks: [{path, title}]; a path the value does not have marks its nearest parent.
  function jsonBlock(v, marks) {
    var lines = [];
    jsonLines(v, "$", 0, null, true, lines);
    var pre = el("pre", "json");
    var hits = {};
    (marks || []).forEach(function (m) {
      var p = m.path || "$";
      for (;;) {
        var idx = lines.findIndex(function (l) { return l.p === p && !l.close; });
        if (idx >= 0 || p === "$") { hits[idx < 0 ? 0 : idx] = m.title; break; }
        p = p.replace(/(\.[^.\[]*|\[\d+\])$/, "") || "$";
      }
    });
    lines.forEach(function (l, i) {
      var line = el("span", "jl" + (i in hits ? " hl" : ""), l.t);
      if (i in hits) { line.title = hits[i]; line.dataset.path = l.p; }
      pre.appendChild(line);
    });
    return pre;
  }

  function brief(v) {
    if (!v || typeof v !== "object") return "";
    var parts = [];
    var m = v.message;
    var content = (m && Array.isArray(m.content)) ? m.content : null;
    if (content) {
      content.forEach(function (b) {
        if (!b || typeof b !== "object") return;
        if (b.type === "text") parts.push(JSON.stringify(String(b.text).slice(0, 80)));
        else if (b.type === "tool_use") parts.push("tool_use " + b.name);
        else if (b.type === "tool_result") parts.push("tool_result" + (b.is_error ? " (error)" : ""));
        else parts.push(b.type);
      });
    }
    if (m && typeof m.content === "string") parts.push(JSON.stringify(m.content.slice(0, 80)));
    if (typeof v.result === "string") parts.push(JSON.stringify(v.result.slice(0, 80)));
    if (v.answered_by) parts.push("answered by " + v.answered_by + ", HTTP " + v.status);
    if (v.request && v.request.subtype) parts.push(v.request.subtype);
    if (v.response && v.response.subtype) parts.push(v.response.subtype);
    return parts.join(" · ");
  }

  var SRC = { stdin: "stdin", stdout: "stdout", request: "stub", stderr: "stderr", exit: "exit" };

  function divText(d) {
    var at = [];
    if (d.frame !== undefined) at.push("frame " + d.frame);
    if (d.line !== undefined) at.push("stdout line " + d.line);
    if (d.path) at.push(d.path);
    return d.kind + (at.length ? " at " + at.join(", ") : "") + ": " + d.message;
  }

  function divNote(d) {
    var box = el("div", "divnote");
    add(box, el("b", null, d.kind), d.path ? el("code", "path", d.path) : null, el("span", null, " " + d.message));
    if (d.expected !== undefined) add(box, add(el("div", "ea"), el("span", "k", "expected "), el("code", null, JSON.stringify(d.expected))));
    if (d.actual !== undefined) add(box, add(el("div", "ea"), el("span", "k", "actual "), el("code", null, JSON.stringify(d.actual))));
    return box;
  }

  function eventRow(t, e, idx) {
    var divs = (e.div || []).map(function (i) { return t.divergences[i]; });
    var row = el("div", "ev " + e.src + (divs.length ? " diverged" : "") + (e.differs ? " differs" : ""));
    row.id = (t.id || "") + ":ev" + idx;
    if (e.frame !== undefined) row.dataset.frame = e.frame;
    add(row, el("span", "time", e.t === undefined || e.t === null ? "" : e.t + " ms"), el("span", "src " + e.src, SRC[e.src] || e.src));
    var body = el("div", "body");
    var head = (e.frame !== undefined ? "#" + e.frame + " " : "") + e.label;
    divs.forEach(function (d) { body.appendChild(divNote(d)); });
    if (e.json !== undefined) {
      var det = el("details");
      det.open = divs.length > 0;
      add(det, add(el("summary"), el("b", null, head), el("span", "brief", " " + brief(e.json))));
      var marks = divs.map(function (d) { return { path: d.path, title: divText(d) }; });
      var grid = el("div", e.expected !== undefined ? "pair" : "single");
      if (e.expected !== undefined) {
        add(grid, add(el("div", "side"), el("div", "cap", "expected (scenario pattern)"), jsonBlock(e.expected)));
      }
      add(grid, add(el("div", "side"), el("div", "cap", e.src === "request" ? "request and answer" : "actual"), jsonBlock(e.json, marks)));
      add(det, grid);
      body.appendChild(det);
    } else {
      add(body, el("b", null, head));
      if (e.text && e.src !== "exit") add(body, el("pre", "text", e.text));
    }
    return add(row, body);
  }

  function timeline(t) {
    var box = el("div", "timeline");
    (t.events || []).forEach(function (e, i) { box.appendChild(eventRow(t, e, i)); });
    if (!t.saved) box.appendChild(el("p", "meta", "No saved output for this trial."));
    return box;
  }

  function diffBlock(text) {
    var pre = el("pre", "diff");
    text.split("\n").forEach(function (l) {
      var c = l.startsWith("+") && !l.startsWith("+++") ? "add" : l.startsWith("-") && !l.startsWith("---") ? "del" : l.startsWith("@@") ? "hunk" : "";
      pre.appendChild(el("span", "dl " + c, l));
    });
    return pre;
  }

  function copyButton(text) {
    var b = el("button", "copy", "copy");
    b.type = "button";
    b.dataset.copy = text;
    return b;
  }

  function trialHeader(t) {
    var h = el("div", "thead");
    add(h, add(el("h2"), el("span", "badge " + t.status, t.status), el("span", null, " " + t.scenario + " "), el("small", null, "on " + t.target + " " + t.version)));
    add(h, el("p", "desc", t.description));
    add(h, el("p", "meta", t.scenario_path + " · exit " + t.exit + " · " + t.duration_ms + " ms" + (t.reason ? " · " + t.reason : "")));
    add(h, add(el("div", "cmd"), el("span", "k", "run again "), el("code", null, t.rerun), copyButton(t.rerun)));
    return h;
  }

  function divergenceList(t) {
    if (!t.divergences.length) return null;
    var ol = el("ol", "divs");
    t.divergences.forEach(function (d, i) {
      var li = el("li");
      var at = (t.events || []).findIndex(function (e) { return (e.div || []).indexOf(i) >= 0; });
      if (at >= 0) {
        var a = el("a", null, divText(d));
        a.href = "#";
        a.addEventListener("click", function (ev) {
          ev.preventDefault();
          var target = document.getElementById(t.id + ":ev" + at);
          if (target) target.scrollIntoView({ block: "center" });
        });
        li.appendChild(a);
      } else {
        li.appendChild(divNote(d));
      }
      ol.appendChild(li);
    });
    return add(el("section"), el("h3", null, "Divergences"), ol);
  }

  function trialView(t) {
    var box = el("div", "trialview");
    add(box, trialHeader(t), divergenceList(t));
    (t.notes || []).forEach(function (n) { box.appendChild(el("p", "meta", "note: " + n)); });
    add(box, el("h3", null, "Timeline"), el("p", "meta", "stdin lines, frames the CLI printed, requests the stub received and its answers, stderr and the exit, in time order. Frames with a divergence are open, the JSON path marked."));
    box.appendChild(timeline(t));
    if (t.diff) {
      var det = add(el("details"), el("summary", null, "Expected frames vs actual, as a diff"));
      add(box, add(det, diffBlock(t.diff)));
    }
    var cl = add(el("details"), el("summary", null, "How the CLI was started"), el("pre", "text", t.command_line));
    return add(box, cl);
  }

  function closeLink() {
    var a = el("a", "close", "× close");
    a.href = "#";
    return a;
  }

  // Opens the trial or comparison the hash names; resolves when it is drawn.
  function show(hash, scroll) {
    var panel = document.getElementById("trial");
    if (!panel) return Promise.resolve();
    var m = /^#(trial|pair)=(.*)$/.exec(hash);
    panel.textContent = "";
    if (!m) { panel.hidden = true; return Promise.resolve(); }
    var id = decodeURIComponent(m[2]);
    return Promise.resolve(data((m[1] === "trial" ? "t:" : "p:") + id)).then(function (d) {
      if (location.hash !== hash) return;
      panel.textContent = "";
      if (!d) { panel.hidden = true; return; }
      panel.appendChild(closeLink());
      if (m[1] === "trial") panel.appendChild(trialView(d));
      else panel.appendChild(pairView(id, d));
      panel.hidden = false;
      if (scroll) window.scrollTo(0, panel.getBoundingClientRect().top + window.scrollY - 8);
    });
  }

  function pairView(id, d) {
    var box = el("div", "pairview");
    add(box, add(el("h2"), el("span", null, id)), el("p", "meta", "Both CLIs' timelines; events with no counterpart on the other side are marked."));
    var grid = el("div", "sidebyside");
    [d.a, d.b].forEach(function (t, i) {
      var col = el("div", "col");
      if (!t) { col.appendChild(el("p", "meta", "side " + (i ? "B" : "A") + " did not run it")); }
      else { add(col, trialHeader(t), timeline(t)); }
      grid.appendChild(col);
    });
    return add(box, grid);
  }

  function filterRows() {
    var input = document.getElementById("filter");
    if (!input) return;
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var rows = document.querySelectorAll("table.filterable tbody tr, #runtable tbody tr");
    var shown = 0;
    rows.forEach(function (r) {
      var text = r.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
      r.hidden = !ok;
      if (ok) shown++;
    });
    var out = document.getElementById("shown");
    if (out) out.textContent = shown + " of " + rows.length + " rows";
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button.copy");
    if (!b) return;
    var text = b.dataset.copy;
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { b.textContent = "copied"; }, function () {});
  });
  var input = document.getElementById("filter");
  if (input) {
    input.addEventListener("input", filterRows);
    // A count on the run page filters the table to its status (again: all rows).
    document.querySelectorAll("body[data-page=run] .count[data-count]").forEach(function (c) {
      c.addEventListener("click", function () {
        input.value = input.value === c.dataset.count ? "" : c.dataset.count;
        filterRows();
      });
    });
  }
  filterRows();
  window.addEventListener("hashchange", function () { show(location.hash, true); });
  var before = performance.now();
  document.body.dataset.parsedMs = parsed;
  show(location.hash, false).then(function () {
    document.body.dataset.openedMs = Math.round(performance.now() - before);
    document.body.dataset.ready = "1";
  }, function (e) {
    document.body.dataset.error = String(e);
  });
})();
