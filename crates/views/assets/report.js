// weft HTML report: draws the timeline and the CPU chart from the inlined data.
// Plain JS, no dependencies. The data is already aggregated by weft (Rust side).
(function () {
  "use strict";
  var status = document.getElementById("weft-status");
  window.addEventListener("error", function (e) {
    status.setAttribute("data-error", String(e.message || e));
    status.textContent = "error: " + (e.message || e);
  });
  var D = JSON.parse(document.getElementById("weft-data").textContent);
  var PAL = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2",
    "#ff9da7", "#9c755f", "#8cd17d", "#86bcb6", "#d37295", "#a0cbe8"];
  var GUTTER = 170, AXIS = 24, GCROW = 14;
  var nl = D.lanes.length;
  var ROW = nl > 300 ? Math.max(3, Math.floor(6000 / nl)) : (nl > 60 ? 12 : 22);
  var dpr = window.devicePixelRatio || 1;
  var view = { t0: 0, t1: D.dur };
  var tl = document.getElementById("tl-canvas"), cpuC = document.getElementById("cpu-canvas");
  var tip = document.getElementById("tip");

  function colour(c) { return c < 0 ? "#8a93a6" : PAL[c % PAL.length]; }
  function human(ns) {
    if (ns < 1e3) return Math.round(ns) + " ns";
    var u = ns < 1e6 ? [1e3, "µs"] : ns < 1e9 ? [1e6, "ms"] : [1e9, "s"];
    var x = ns / u[0];
    return (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) + " " + u[1];
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }

  // Executions per lane, in begin order (indices into D.ex arrays).
  var laneOf = {}, perLane = [];
  D.lanes.forEach(function (l, i) { laneOf[l.t] = i; perLane.push([]); });
  var E = D.ex, n = E.b.length;
  for (var i = 0; i < n; i++) { var li = laneOf[E.t[i]]; if (li !== undefined) perLane[li].push(i); }
  perLane.forEach(function (a) { a.sort(function (x, y) { return E.b[x] - E.b[y]; }); });
  var maxDur = perLane.map(function (a) { var m = 0; a.forEach(function (i) { if (E.d[i] > m) m = E.d[i]; }); return m; });
  var sampled = D.tasks_shown < D.tasks_total;
  // Lock waits (blocked) and other waits per lane, in begin order (indices into D.waits arrays).
  var WT = D.waits, perLaneW = [], nw = WT.b.length;
  D.lanes.forEach(function () { perLaneW.push([]); });
  for (var wi = 0; wi < nw; wi++) { var wl = laneOf[WT.t[wi]]; if (wl !== undefined) perLaneW[wl].push(wi); }
  var maxDurW = perLaneW.map(function (a) { var m = 0; a.forEach(function (i) { if (WT.d[i] > m) m = WT.d[i]; }); return m; });
  var BLOCKED = "#8e3b9e", WAITC = "#aab4c8";
  function waitStrip(y) { var h = Math.max(2, Math.round(ROW * 0.24)); return [y + ROW - h - 1, h]; }

  // Legend and note.
  var legend = document.getElementById("legend"), seen = {};
  D.lanes.forEach(function (l) { for (var k = 3; k < l.cells.length; k += 4) seen[l.cells[k]] = 1; });
  for (var k = 0; k < n; k++) seen[E.c[k]] = 1;
  D.classes.forEach(function (c, i) {
    if (!seen[i] || legend.childNodes.length >= 14) return;
    var s = document.createElement("span");
    s.innerHTML = '<span class="sw" style="background:' + colour(i) + '"></span>' + esc(c.n);
    legend.appendChild(s);
  });
  var gl = document.createElement("span");
  gl.innerHTML = '<span class="sw" style="background:#d64545"></span>GC pause';
  legend.appendChild(gl);
  if (nw) {
    var bl = document.createElement("span");
    bl.innerHTML = '<span class="sw" style="background:' + BLOCKED + ';height:4px;vertical-align:2px"></span>blocked on a lock';
    legend.appendChild(bl);
    var wl2 = document.createElement("span");
    wl2.innerHTML = '<span class="sw" style="background:' + WAITC + ';height:4px;vertical-align:2px"></span>wait (Object.wait, park, latch)';
    legend.appendChild(wl2);
  }
  var ql = document.createElement("span");
  ql.innerHTML = '<span class="sw" style="background:#9aa3b5;height:2px;vertical-align:3px"></span>queue wait';
  legend.appendChild(ql);
  var note = document.getElementById("note");
  note.textContent = (sampled
    ? D.tasks_total.toLocaleString() + " task executions: shaded bars show how busy each thread was per " + human(D.bucket_ns) +
      " (colour: the class that used most of it); the " + D.tasks_shown.toLocaleString() + " longest executions are drawn one by one."
    : D.tasks_total.toLocaleString() + " task executions, all drawn; nested executions are drawn in the lower half of their parent.");
  if (WT.total > nw) note.textContent += " Lock waits and waits: the " + nw.toLocaleString() + " longest of " + WT.total.toLocaleString() + " are drawn.";

  function width() { return Math.max(400, tl.parentNode.clientWidth); }
  function xOf(t, W) { return GUTTER + (t - view.t0) / (view.t1 - view.t0) * (W - GUTTER - 8); }
  function tOf(x, W) { return view.t0 + (x - GUTTER) / (W - GUTTER - 8) * (view.t1 - view.t0); }

  function niceStep(span, target) {
    var raw = span / target, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function axis(g, W, y, h) {
    var step = niceStep(view.t1 - view.t0, Math.max(2, (W - GUTTER) / 110));
    g.fillStyle = "#6b7385"; g.font = "11px system-ui,sans-serif"; g.textAlign = "center";
    for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      var x = Math.round(xOf(t, W)) + 0.5;
      g.strokeStyle = "#eef0f4"; g.beginPath(); g.moveTo(x, y); g.lineTo(x, y + h); g.stroke();
      g.fillText(human(t), x, 14);
    }
  }
  function setup(c, W, H) {
    c.width = W * dpr; c.height = H * dpr; c.style.width = W + "px"; c.style.height = H + "px";
    var g = c.getContext("2d"); g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, W, H); return g;
  }

  var drawn = { timeline: 0, cpu: 0, waits: 0, csp: 0 };
  function drawTimeline() {
    var W = width(), H = AXIS + GCROW + 4 + nl * ROW + 4;
    var g = setup(tl, W, H), top = AXIS + GCROW + 4, count = 0;
    axis(g, W, AXIS, H - AXIS);
    g.textAlign = "left"; g.font = "12px system-ui,sans-serif";
    // GC row and bands.
    g.fillStyle = "#6b7385"; g.fillText("GC", 8, AXIS + GCROW - 3);
    for (var k = 0; k < D.gc.length; k += 2) {
      if (D.gc[k + 1] < view.t0 || D.gc[k] > view.t1) continue;
      var x0 = xOf(D.gc[k], W), x1 = Math.max(x0 + 1, xOf(D.gc[k + 1], W));
      g.fillStyle = "#d64545"; g.fillRect(x0, AXIS + 2, x1 - x0, GCROW - 3);
      g.fillStyle = "rgba(214,69,69,0.10)"; g.fillRect(x0, top, x1 - x0, nl * ROW);
      count++;
    }
    var bw = D.bucket_ns;
    for (var li = 0; li < nl; li++) {
      var L = D.lanes[li], y = top + li * ROW;
      if (li % 2) { g.fillStyle = "#fafbfc"; g.fillRect(GUTTER, y, W - GUTTER, ROW); }
      // Several JVMs: a line above the first thread of each JVM's group.
      if (li > 0 && L.g !== undefined && L.g !== D.lanes[li - 1].g) { g.fillStyle = "#6b7385"; g.fillRect(0, y, W, 1); }
      if (ROW >= 10) {
        g.fillStyle = "#1d2330"; g.font = (ROW >= 18 ? 12 : 10) + "px system-ui,sans-serif";
        var name = L.name.length > 24 ? L.name.slice(0, 23) + "…" : L.name;
        g.fillText(name, 8, y + ROW / 2 + 4);
      }
      // Thread life.
      var s = Math.max(L.s, view.t0), e = Math.min(L.e, view.t1);
      if (e > s) { g.fillStyle = "#e9edf3"; g.fillRect(xOf(s, W), y + ROW * 0.42, Math.max(1, xOf(e, W) - xOf(s, W)), ROW * 0.16); }
      // Buckets: when executions were sampled, or when too many are in view.
      if (sampled) {
        var c = L.cells, pxPerBucket = bw / (view.t1 - view.t0) * (W - GUTTER - 8);
        for (var j = 0; j < c.length; j += 4) {
          var b0 = c[j] * bw;
          if (b0 + bw < view.t0 || b0 > view.t1) continue;
          var busy = c[j + 1] / 1000;
          if (busy <= 0) continue;
          g.globalAlpha = 0.25 + 0.75 * busy;
          g.fillStyle = colour(c[j + 3]);
          var bx = xOf(b0, W);
          g.fillRect(bx, y + 2, Math.max(1, pxPerBucket), ROW - 4);
          count++;
        }
        g.globalAlpha = 1;
      }
      // Individual executions.
      var ids = perLane[li], md = maxDur[li];
      for (var q = 0; q < ids.length; q++) {
        var ix = ids[q], b = E.b[ix];
        if (b > view.t1) break;
        if (b + E.d[ix] < view.t0 || b + md < view.t0) continue;
        var xa = xOf(b, W), xb = xOf(b + E.d[ix], W), w = xb - xa;
        if (sampled && w < 1) continue;
        var lv = E.l[ix];
        if (lv < 0) { g.fillStyle = colour(E.c[ix]); g.globalAlpha = 0.6; g.fillRect(xa, y + ROW * 0.4, Math.max(w, 1), ROW * 0.2); g.globalAlpha = 1; count++; continue; }
        var hh = lv ? (ROW - 4) / 2 : ROW - 4, yy = lv ? y + 2 + (ROW - 4) / 2 : y + 2;
        if (E.q[ix] > 0 && ROW >= 10) {
          var xq = xOf(b - E.q[ix], W);
          if (xa - xq >= 2) { g.fillStyle = "#9aa3b5"; g.fillRect(xq, y + ROW / 2 - 0.5, xa - xq, 1); }
        }
        g.fillStyle = colour(E.c[ix]);
        g.fillRect(xa, yy, Math.max(w, 0.8), hh);
        if (w > 5 && ROW >= 10) { g.fillStyle = "rgba(255,255,255,.55)"; g.fillRect(xa, yy, 1, hh); }
        count++;
      }
    }
    // Lock waits and other waits: a strip along the bottom of each lane.
    var wcount = 0;
    for (li = 0; li < nl; li++) {
      var wids = perLaneW[li], wmd = maxDurW[li], ys = waitStrip(top + li * ROW);
      for (var wq = 0; wq < wids.length; wq++) {
        var wx = wids[wq], wb = WT.b[wx];
        if (wb > view.t1) break;
        if (wb + WT.d[wx] < view.t0 || wb + wmd < view.t0) continue;
        var wa = xOf(wb, W), wbx = xOf(wb + WT.d[wx], W);
        g.fillStyle = WT.k[wx] === 0 ? BLOCKED : WAITC;
        g.fillRect(wa, ys[0], Math.max(wbx - wa, 0.8), ys[1]);
        wcount++;
      }
    }
    drawn.waits = wcount;
    g.strokeStyle = "#e3e6ec"; g.beginPath(); g.moveTo(GUTTER - 0.5, AXIS); g.lineTo(GUTTER - 0.5, H); g.stroke();
    drawn.timeline = count;
    document.getElementById("range").textContent = human(view.t0) + " – " + human(view.t1) + " (" + human(view.t1 - view.t0) + ")";
  }

  function drawCpu() {
    var W = width(), H = 130, top = AXIS + 4, ch = H - top - 10;
    var g = setup(cpuC, W, H), count = 0;
    axis(g, W, AXIS, H - AXIS);
    g.font = "11px system-ui,sans-serif"; g.textAlign = "right"; g.fillStyle = "#6b7385";
    var maxU = 1;
    for (var k = 2; k < D.cpu.length; k += 4) maxU = Math.max(maxU, D.cpu[k]);
    var maxCs = 1;
    for (k = 3; k < D.cpu.length; k += 4) maxCs = Math.max(maxCs, D.cpu[k]);
    [0, 0.5, 1].forEach(function (f) {
      var y = top + ch - f / maxU * ch;
      g.fillText(Math.round(f * 100) + "%", GUTTER - 6, y + 4);
      g.strokeStyle = "#eef0f4"; g.beginPath(); g.moveTo(GUTTER, y + 0.5); g.lineTo(W - 8, y + 0.5); g.stroke();
    });
    g.textAlign = "left"; g.fillStyle = "#1d2330"; g.font = "12px system-ui,sans-serif";
    g.fillText(D.cpus_known ? "of " + D.cpus + " CPUs" : "1 CPU = 100%", 8, top + 12);
    g.fillStyle = "#d9822b"; g.fillText("— context switches", 8, top + 30);
    g.fillStyle = "#6b7385"; g.fillText("(max " + Math.round(maxCs) + " /100ms)", 8, top + 46);
    if (D.cpu.length === 0) { g.fillStyle = "#6b7385"; g.fillText("no CPU samples in this trace", GUTTER + 10, top + ch / 2); }
    g.fillStyle = "rgba(53,99,201,0.35)"; g.strokeStyle = "#3563c9";
    for (k = 0; k < D.cpu.length; k += 4) {
      var s = D.cpu[k], e = D.cpu[k + 1];
      if (e < view.t0 || s > view.t1) continue;
      var x0 = xOf(Math.max(s, view.t0), W), x1 = xOf(Math.min(e, view.t1), W), y = top + ch - D.cpu[k + 2] / maxU * ch;
      g.fillRect(x0, y, Math.max(1, x1 - x0), top + ch - y);
      g.beginPath(); g.moveTo(x0, y + 0.5); g.lineTo(x1, y + 0.5); g.stroke();
      count++;
    }
    // Context switches: one step per sample interval.
    g.strokeStyle = "#d9822b"; g.lineWidth = 1.5; g.beginPath();
    for (k = 0; k < D.cpu.length; k += 4) {
      var cs0 = D.cpu[k], cs1 = D.cpu[k + 1];
      if (cs1 < view.t0 || cs0 > view.t1) continue;
      var yy = top + ch - D.cpu[k + 3] / maxCs * ch * 0.95;
      g.moveTo(xOf(Math.max(cs0, view.t0), W), yy); g.lineTo(xOf(Math.min(cs1, view.t1), W), yy);
    }
    g.stroke(); g.lineWidth = 1;
    for (k = 0; k < D.gc.length; k += 2) {
      if (D.gc[k + 1] < view.t0 || D.gc[k] > view.t1) continue;
      var gx = xOf(D.gc[k], W);
      g.fillStyle = "rgba(214,69,69,0.5)"; g.fillRect(gx, top, Math.max(1, xOf(D.gc[k + 1], W) - gx), 3);
    }
    drawn.cpu = count;
  }

  // Lock groups' CSP per interval, on the timeline's x axis (same gutter, width, zoom).
  var cspC = Array.prototype.slice.call(document.querySelectorAll("canvas.csp-canvas"));
  var CSPH = 96;
  function cspGeom(G) {
    var top = AXIS + 6, ch = CSPH - top - 6, max = 0.05;
    for (var k = 1; k < G.s.length; k += 2) max = Math.max(max, G.s[k]);
    return { top: top, ch: ch, max: max };
  }
  function drawCsp() {
    var W = width(), bars = 0;
    cspC.forEach(function (c) {
      var G = (D.csp || [])[+c.getAttribute("data-g")];
      if (!G) return;
      var g = setup(c, W, CSPH), m = cspGeom(G), base = m.top + m.ch;
      axis(g, W, AXIS, CSPH - AXIS);
      g.font = "11px system-ui,sans-serif"; g.textAlign = "right"; g.fillStyle = "#6b7385";
      [0, m.max].forEach(function (v) {
        var y = base - v / m.max * m.ch;
        g.fillText(Math.round(v * 100) + "%", GUTTER - 6, y + 4);
        g.strokeStyle = "#eef0f4"; g.beginPath(); g.moveTo(GUTTER, y + 0.5); g.lineTo(W - 8, y + 0.5); g.stroke();
      });
      g.textAlign = "left"; g.fillText("CSP", 8, m.top + 12);
      if (G.pk && G.pk[0] + G.iv >= view.t0 && G.pk[0] <= view.t1) {
        var px0 = xOf(Math.max(G.pk[0], view.t0), W), px1 = Math.max(px0 + 2, xOf(Math.min(G.pk[0] + G.iv, view.t1), W));
        g.fillStyle = "rgba(217,130,43,0.13)"; g.fillRect(px0, m.top, px1 - px0, m.ch);
        g.setLineDash([2, 2]); g.strokeStyle = "#d9822b"; g.strokeRect(px0 + 0.5, m.top + 0.5, px1 - px0 - 1, m.ch - 1); g.setLineDash([]);
      }
      g.fillStyle = colour(G.c);
      for (var k = 0; k < G.s.length; k += 2) {
        var t = G.s[k], v = G.s[k + 1];
        if (v <= 0 || t + G.iv < view.t0 || t > view.t1) continue;
        var x0 = xOf(Math.max(t, view.t0), W), x1 = Math.max(x0 + 1, xOf(Math.min(t + G.iv, view.t1), W)), y = base - v / m.max * m.ch;
        g.fillRect(x0, y, x1 - x0, Math.max(1, base - y));
        bars++;
      }
    });
    drawn.csp = bars;
  }

  // Flame graph of the sampled stacks (section "profile"): the rows the filters
  // keep, added into a tree, drawn root at the top as positioned divs.
  var FG = D.profile, fgBox = document.getElementById("fg");
  function fgFill(id, names) {
    var sel = document.getElementById(id);
    if (!sel) return;
    names.forEach(function (n, i) { var o = document.createElement("option"); o.value = String(i); o.textContent = n; sel.appendChild(o); });
    sel.addEventListener("change", drawFlame);
  }
  function drawFlame() {
    if (!fgBox) return 0;
    var mode = +document.getElementById("fg-mode").value;
    var cv = document.getElementById("fg-class").value, lv = document.getElementById("fg-lock").value;
    var cls = cv === "" ? null : +cv, lck = lv === "" ? null : +lv;
    var root = { n: "all", v: 0, c: {} };
    FG.rows.forEach(function (r) {
      if (r[1] !== mode || (cls !== null && r[2] !== cls) || (lck !== null && r[3] !== lck)) return;
      root.v += r[4];
      var node = root;
      FG.stacks[r[0]].forEach(function (f) {
        var k = node.c[f] || (node.c[f] = { n: FG.frames[f], v: 0, c: {} });
        k.v += r[4]; node = k;
      });
    });
    var H = 16, parts = [], depth = 0, total = root.v || 1;
    (function walk(node, x, d) {
      var w = node.v / total;
      if (w < 0.002) return;
      if (d > depth) depth = d;
      parts.push('<div class="fg-node" style="left:' + (x * 100).toFixed(3) + "%;width:" + (w * 100).toFixed(3) + "%;top:" + d * H + 'px;background:' +
        PAL[(node.n.length * 7 + d) % PAL.length] + '" title="' + esc(node.n + " — " + node.v + " samples, " + (w * 100).toFixed(1) + "%") + '">' + esc(node.n) + "</div>");
      var keys = Object.keys(node.c).sort(function (a, b) { return node.c[b].v - node.c[a].v; });
      var cx = x;
      keys.forEach(function (k) { walk(node.c[k], cx, d + 1); cx += node.c[k].v / total; });
    })(root, 0, 0);
    fgBox.style.height = ((depth + 1) * H + 2) + "px";
    fgBox.innerHTML = root.v ? parts.join("") : '<p class="muted small">No samples for this choice.</p>';
    document.getElementById("fg-total").textContent = root.v + " samples";
    status.setAttribute("data-flame", root.v ? parts.length : 0);
    return parts.length;
  }
  if (fgBox) {
    fgFill("fg-class", FG.classes); fgFill("fg-lock", FG.locks);
    document.getElementById("fg-mode").addEventListener("change", drawFlame);
  }

  function draw() {
    drawTimeline(); drawCpu(); drawCsp(); drawFlame();
    var hb = document.querySelectorAll("#granularity svg.hist rect.bar").length;
    var cb = drawn.csp;
    // The lock charts' x axis is the timeline's: same left edge and width on the page.
    var tr = tl.getBoundingClientRect(), aligned = cspC.every(function (c) {
      var r = c.getBoundingClientRect();
      return Math.abs(r.left - tr.left) < 0.5 && Math.abs(r.width - tr.width) < 0.5;
    });
    status.setAttribute("data-csp-charts", cspC.length);
    status.setAttribute("data-csp-aligned", aligned ? 1 : 0);
    status.setAttribute("data-csp", cb);
    status.setAttribute("data-forkjoin", document.querySelectorAll("#forkjoin svg rect.bar").length);
    status.setAttribute("data-timeline", drawn.timeline);
    status.setAttribute("data-histograms", hb);
    status.setAttribute("data-cpu", drawn.cpu);
    status.setAttribute("data-waits", drawn.waits);
    if (!status.hasAttribute("data-error")) status.textContent = "ok timeline=" + drawn.timeline + " histograms=" + hb + " cpu=" + drawn.cpu + " csp=" + cb;
  }

  // ---- interaction ----
  function zoom(f, tc) {
    var span = view.t1 - view.t0, ns = Math.min(D.dur, Math.max(1000, span * f));
    var a = (tc - view.t0) / span;
    view.t0 = tc - a * ns; view.t1 = view.t0 + ns;
    if (view.t0 < 0) { view.t1 -= view.t0; view.t0 = 0; }
    if (view.t1 > D.dur) { view.t0 -= view.t1 - D.dur; view.t1 = D.dur; view.t0 = Math.max(0, view.t0); }
    draw();
  }
  function bindPan(c) {
    c.addEventListener("wheel", function (ev) {
      var r = c.getBoundingClientRect(), x = ev.clientX - r.left;
      if (x < GUTTER) return;
      ev.preventDefault();
      zoom(ev.deltaY > 0 ? 1.25 : 0.8, tOf(x, width()));
    }, { passive: false });
    var drag = null;
    c.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, t0: view.t0, t1: view.t1 }; });
    window.addEventListener("mouseup", function () { drag = null; });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var W = width(), dt = (ev.clientX - drag.x) / (W - GUTTER - 8) * (drag.t1 - drag.t0);
      var t0 = Math.min(Math.max(0, drag.t0 - dt), D.dur - (drag.t1 - drag.t0));
      view.t0 = t0; view.t1 = t0 + (drag.t1 - drag.t0); draw();
    });
    c.addEventListener("dblclick", function () { view.t0 = 0; view.t1 = D.dur; draw(); });
  }
  bindPan(tl); bindPan(cpuC); cspC.forEach(bindPan);
  document.getElementById("zin").onclick = function () { zoom(0.5, (view.t0 + view.t1) / 2); };
  document.getElementById("zout").onclick = function () { zoom(2, (view.t0 + view.t1) / 2); };
  document.getElementById("zreset").onclick = function () { view.t0 = 0; view.t1 = D.dur; draw(); };

  function showTip(ev, html) {
    if (!html) { tip.hidden = true; return; }
    tip.innerHTML = html; tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth - 8) x = ev.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight - 8) y = ev.clientY - tip.offsetHeight - 10;
    tip.style.left = x + "px"; tip.style.top = y + "px";
  }
  function row(k, v) { return '<div><span class="r">' + k + ":</span> " + esc(v) + "</div>"; }
  tl.addEventListener("mousemove", function (ev) {
    var r = tl.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top, W = width();
    var top = AXIS + GCROW + 4, li = Math.floor((y - top) / ROW);
    var t = tOf(x, W), tol = (view.t1 - view.t0) / (W - GUTTER) * 2;
    if (y >= AXIS && y < top) {
      for (var k = 0; k < D.gc.length; k += 2)
        if (t >= D.gc[k] - tol && t <= D.gc[k + 1] + tol)
          return showTip(ev, "<b>GC pause</b>" + row("at", human(D.gc[k])) + row("length", human(D.gc[k + 1] - D.gc[k])));
      return showTip(ev, null);
    }
    if (li < 0 || li >= nl) return showTip(ev, null);
    var L = D.lanes[li];
    if (x < GUTTER) {
      return showTip(ev, "<b>" + esc(L.name) + "</b>" + row("alive", human(L.s) + " – " + (L.ended ? human(L.e) : "end of recording")) +
        (L.cpu != null ? row("CPU time", human(L.cpu)) : "") + (L.daemon ? row("daemon", "yes") : ""));
    }
    // A lock wait or wait under the cursor (the strip at the bottom of the lane).
    var ys = waitStrip(top + li * ROW);
    if (y >= ys[0] - 1 && y <= ys[0] + ys[1] + 1) {
      var wids = perLaneW[li], wbest = -1;
      for (var wq = 0; wq < wids.length; wq++) {
        var wx = wids[wq];
        if (WT.b[wx] > t + tol) break;
        if (WT.b[wx] + WT.d[wx] + tol >= t) wbest = wx;
      }
      if (wbest >= 0) {
        var blocked = WT.k[wbest] === 0;
        return showTip(ev, "<b>" + (blocked ? "blocked on " : "") + esc(WT.strs[WT.n[wbest]]) + "</b> <span class=r>(" + (blocked ? "lock" : "wait") + ")</span>" +
          row("thread", L.name) + row("begin", human(WT.b[wbest])) + row("duration", human(WT.d[wbest])) +
          (WT.o[wbest] >= 0 ? row("held by", WT.strs[WT.o[wbest]]) : "") +
          (WT.s[wbest] >= 0 ? row("at", WT.strs[WT.s[wbest]]) : ""));
      }
    }
    // Deepest execution under the cursor.
    var ids = perLane[li], best = -1, lowerHalf = (y - top - li * ROW) > ROW / 2;
    for (var q = 0; q < ids.length; q++) {
      var ix = ids[q];
      if (E.b[ix] > t + tol) break;
      if (E.b[ix] + E.d[ix] + tol >= t && (best < 0 || E.l[ix] >= E.l[best]) && (E.l[ix] <= 0 || lowerHalf)) best = ix;
    }
    if (best >= 0) {
      var c = D.classes[E.c[best]] || { n: "?", k: "?" }, f = E.f[best];
      return showTip(ev, "<b>" + esc(c.n) + "</b> <span class=r>(" + c.k + (f & 1 ? ", aggregated" : "") + (f & 2 ? ", closed by weft" : "") + ")</span>" +
        row("thread", L.name) + row("begin", human(E.b[best])) + row("duration", human(E.d[best])) + row("self time", human(E.s[best])) +
        (E.q[best] >= 0 ? row("queue wait", human(E.q[best])) : "") +
        (E.ss[best] >= 0 ? row("submitted at", D.sites[E.ss[best]]) : "") +
        (E.cs[best] >= 0 ? row("created at", D.sites[E.cs[best]]) : ""));
    }
    if (sampled) {
      var bk = Math.floor(t / D.bucket_ns), cells = L.cells;
      for (var j = 0; j < cells.length; j += 4) if (cells[j] === bk) {
        var cc = D.classes[cells[j + 3]];
        return showTip(ev, "<b>" + esc(L.name) + "</b>" + row("time", human(bk * D.bucket_ns) + " – " + human((bk + 1) * D.bucket_ns)) +
          row("busy", (cells[j + 1] / 10).toFixed(1) + "%") + row("executions begun", cells[j + 2]) + (cc ? row("mostly", cc.n) : ""));
      }
    }
    showTip(ev, null);
  });
  tl.addEventListener("mouseleave", function () { tip.hidden = true; });
  cpuC.addEventListener("mousemove", function (ev) {
    var r = cpuC.getBoundingClientRect(), t = tOf(ev.clientX - r.left, width());
    for (var k = 0; k < D.cpu.length; k += 4) if (t >= D.cpu[k] && t < D.cpu[k + 1])
      return showTip(ev, "<b>" + human(D.cpu[k]) + " – " + human(D.cpu[k + 1]) + "</b>" + row("CPU", (D.cpu[k + 2] * 100).toFixed(0) + "%" + (D.cpus_known ? " of " + D.cpus + " CPUs" : " of 1 CPU")) +
        row("context switches", D.cpu[k + 3] + " /100ms"));
    showTip(ev, null);
  });
  cpuC.addEventListener("mouseleave", function () { tip.hidden = true; });
  cspC.forEach(function (c) {
    c.addEventListener("mousemove", function (ev) {
      var G = (D.csp || [])[+c.getAttribute("data-g")];
      if (!G) return;
      var r = c.getBoundingClientRect(), t = tOf(ev.clientX - r.left, width());
      for (var k = 0; k < G.s.length; k += 2) if (t >= G.s[k] && t < G.s[k] + G.iv)
        return showTip(ev, "<b>" + human(G.s[k]) + " – " + human(G.s[k] + G.iv) + "</b>" + row("CSP", (G.s[k + 1] * 100).toFixed(1) + "%") +
          (G.pk && G.pk[0] === G.s[k] ? row("peak", "yes") : ""));
      showTip(ev, null);
    });
    c.addEventListener("mouseleave", function () { tip.hidden = true; });
  });
  var rt = null;
  window.addEventListener("resize", function () { clearTimeout(rt); rt = setTimeout(draw, 100); });
  draw();
})();
