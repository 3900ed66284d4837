/**
 * The report page's script (runs in the browser, inline in the HTML): reads the embedded
 * ReportData (report-data.ts) and draws each chart with uPlot into its fixed-size box. When
 * done it writes, on <body>, data-rendered (the charts drawn), data-render-ms (the time from the
 * script's start) and on each chart box data-box ("x,y,width,height" of its plotting area, CSS
 * pixels, the axes and legend outside it), which the
 * test reads to look at each chart's pixels in a screenshot. Plain ES2017, no module: a file
 * opened from disk runs it as it is.
 */
export const REPORT_PAGE_SCRIPT = String.raw`
(function () {
  "use strict";
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById("rw-data").textContent);
  var WIDTH = 1300, HEIGHT = 300;
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#843c39"];
  function bytes(v) {
    var a = Math.abs(v);
    if (a >= 1 << 30) return (v / (1 << 30)).toFixed(1) + " GiB";
    if (a >= 1 << 20) return (v / (1 << 20)).toFixed(1) + " MiB";
    if (a >= 1 << 10) return (v / (1 << 10)).toFixed(1) + " KiB";
    return v.toFixed(0) + " B";
  }
  function xAxis() {
    return { label: data.bucket > 1 ? "collection (mean of " + data.bucket + " per point)" : "collection" };
  }
  function yAxis(label, format, scale, side) {
    var a = { label: label, size: 80, scale: scale || "y" };
    if (format) a.values = function (u, vals) { return vals.map(format); };
    if (side) { a.side = side; a.grid = { show: false }; }
    return a;
  }
  // series: [{ label, values, scale?, color?, dash? }]
  function lines(id, title, series, axes) {
    var opts = { title: title, width: WIDTH, height: HEIGHT, scales: { x: { time: false } }, series: [{ label: "collection" }], axes: [xAxis()].concat(axes) };
    var columns = [data.x];
    series.forEach(function (s, k) {
      var line = { label: s.label, stroke: s.color || COLORS[k % COLORS.length], width: 1.5, scale: s.scale || "y", points: { show: data.x.length < 60 } };
      if (s.dash) line.dash = s.dash;
      opts.series.push(line);
      columns.push(s.values);
    });
    return new uPlot(opts, columns, document.getElementById(id));
  }
  var S = data.series;
  var charts = [];
  var pauseSeries = [{ label: "pause", values: S.pauseMs }];
  if (data.bucket > 1) pauseSeries.push({ label: "longest pause in bucket", values: data.pauseMaxMs });
  pauseSeries.push({ label: "stop the world", values: S.stopTheWorldMs }, { label: "scan", values: S.scanMs }, { label: "trace and evacuate", values: S.traceEvacuateMs },
    { label: "sweep", values: S.sweepMs }, { label: "verify", values: S.verifyMs });
  charts.push(lines("chart-pause", "Pause per collection and its phases (ms)", pauseSeries, [yAxis("ms")]));
  charts.push(histogram());
  charts.push(lines("chart-heap", "Heap before and after each collection", [
    { label: "in use before", values: S.usedBeforeBytes }, { label: "in use after", values: S.usedAfterBytes }, { label: "live (marked)", values: S.liveBytes }
  ], [yAxis("bytes", bytes)]));
  charts.push(lines("chart-blocks", "Blocks after each collection, by state, and free lines", [
    { label: "full", values: S.blocksFull }, { label: "reusable", values: S.blocksReusable }, { label: "free", values: S.blocksFree },
    { label: "in use", values: S.blocksInUse }, { label: "free lines in reusable blocks", values: S.reusableLines, scale: "lines" }
  ], [yAxis("blocks"), yAxis("lines", null, "lines", 1)]));
  var moved = [{ label: "evacuated", values: S.evacuatedBytes }];
  if (S.promotedBytes) moved.push({ label: "promoted", values: S.promotedBytes });
  charts.push(lines("chart-moved", "Bytes moved per collection", moved, [yAxis("bytes", bytes)]));
  // Frames skipped below return barriers (a nursery collection's scan) can outnumber those walked a
  // thousandfold: they have their own scale, on the right.
  charts.push(lines("chart-scan", "Frames scanned, frames skipped by return barriers (right axis) and roots per collection (all threads)", [
    { label: "frames scanned", values: S.frames }, { label: "roots", values: S.roots },
    { label: "frames skipped (right axis)", values: S.framesSkipped, scale: "skipped", dash: [6, 4] }
  ], [yAxis("count"), yAxis("frames skipped", null, "skipped", 1)]));
  charts.push(threadFrames());
  charts.push(lines("chart-thread-roots", "Roots scanned per collection, per thread", data.threads.map(function (t) { return { label: t.label, values: t.roots }; }), [yAxis("roots")]));

  // Per thread, frames scanned; where any were skipped, each thread's skipped frames too (dashed, its color, the right axis).
  function threadFrames() {
    var skipped = data.threads.some(function (t) { return t.framesSkipped.some(function (n) { return n > 0; }); });
    var series = data.threads.map(function (t, k) { return { label: t.label, values: t.frames, color: COLORS[k % COLORS.length] }; });
    var axes = [yAxis("frames scanned")];
    if (skipped) {
      data.threads.forEach(function (t, k) { series.push({ label: t.label + " skipped", values: t.framesSkipped, color: COLORS[k % COLORS.length], scale: "skipped", dash: [6, 4] }); });
      axes.push(yAxis("frames skipped", null, "skipped", 1));
    }
    var title = skipped ? "Frames scanned per collection, per thread, and frames skipped by return barriers (dashed, right axis)" : "Frames scanned per collection, per thread";
    return lines("chart-threads", title, series, axes);
  }

  function histogram() {
    var h = data.histogram, p = data.percentiles.pauseMs;
    var marks = [["p50", p.p50], ["p90", p.p90], ["p99", p.p99], ["max", p.max]];
    var opts = {
      title: "Pause distribution over all " + data.collections + " collections (p50 " + p.p50.toFixed(3) + " ms, p90 " + p.p90.toFixed(3) + " ms, p99 " + p.p99.toFixed(3) + " ms, max " + p.max.toFixed(3) + " ms)",
      width: WIDTH, height: HEIGHT, scales: { x: { time: false, range: function () { return [0, h.fromMs[h.fromMs.length - 1] + 2 * h.widthMs]; } } },
      series: [{ label: "pause from (ms)" }, { label: "collections", fill: "#1f77b488", stroke: "#1f77b4", paths: uPlot.paths.bars({ size: [1, Infinity], align: 1 }), points: { show: false } }],
      axes: [{ label: "pause (ms)" }, yAxis("collections")],
      hooks: { draw: [function (u) {
        var ctx = u.ctx;
        ctx.save();
        marks.forEach(function (m, k) {
          var x = u.valToPos(m[1], "x", true);
          ctx.strokeStyle = COLORS[(k + 1) % COLORS.length]; ctx.lineWidth = 2; ctx.setLineDash([6, 4]);
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
          ctx.fillStyle = ctx.strokeStyle; ctx.font = "bold " + Math.round(12 * devicePixelRatio) + "px sans-serif";
          ctx.fillText(m[0], x + 4, u.bbox.top + 14 * devicePixelRatio * (k + 1));
        });
        ctx.restore();
      }] }
    };
    return new uPlot(opts, [h.fromMs, h.counts], document.getElementById("chart-histogram"));
  }

  // uPlot lays its plotting area out in a microtask queued by each constructor: this one runs after them.
  queueMicrotask(function () {
    document.querySelectorAll(".chart").forEach(function (el) {
      var over = el.querySelector(".u-over");
      var r = (over || el).getBoundingClientRect();
      el.dataset.box = [r.left + scrollX, r.top + scrollY, r.width, r.height].map(Math.round).join(",");
    });
    document.body.dataset.rendered = String(charts.length);
    document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
    document.getElementById("render-time").textContent = "drawn in " + (performance.now() - t0).toFixed(0) + " ms";
  });
})();
`;
