// The pages' one script (served at /assets/app.js, no build step): draws the charts with uPlot from
// the JSON beside each one, and keeps the page live from GET /api/events/stream (Server-Sent Events
// read with fetch, so the workspace and view link travel as headers; resumes with Last-Event-ID).
// On an event it fetches the same page again and swaps <main>: the figures stay exactly the ones the
// server renders through the API, and nothing reloads.
(function () {
  'use strict';
  var plots = [];

  // The charts speak the browser's language when Intl accepts its tag; LANG=C.UTF-8 makes Chromium
  // report en-US@posix, which Intl rejects (a RangeError would draw nothing), so such a tag reads as en-US.
  var LOCALE = (function () {
    var tags = [];
    try { tags = [].concat(navigator.languages || [], navigator.language || []); } catch { /* none given */ }
    for (var i = 0; i < tags.length; i++) {
      try {
        new Intl.NumberFormat(tags[i]);
        new Intl.DateTimeFormat(tags[i]);
        return tags[i];
      } catch { /* the next tag */ }
    }
    return 'en-US';
  })();
  function formatter(make, fallback) {
    try { return make(LOCALE); } catch {
      try { return make('en-US'); } catch { return { format: fallback }; }
    }
  }
  var chartNum = formatter(function (l) { return new Intl.NumberFormat(l, { maximumFractionDigits: 2 }); }, String);
  var instantFmt = formatter(function (l) {
    return new Intl.DateTimeFormat(l, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hourCycle: 'h23' });
  }, function (d) { return new Date(d).toISOString(); });
  var dateFmt = formatter(function (l) { return new Intl.DateTimeFormat(l, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' }); }, function (d) { return new Date(d).toISOString().slice(0, 10); });

  function showChart(v, unit) {
    return v === null || v === undefined ? '—' : chartNum.format(v) + (unit ? ' ' + unit : '');
  }

  // Colours from the page's own scheme (app.css), read again when the visitor's scheme changes.
  var dark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  var LIGHT = ['#2563eb', '#b45309', '#047857', '#be185d', '#6d28d9', '#0e7490', '#4d7c0f', '#b91c1c'];
  var DARK = ['#60a5fa', '#fbbf24', '#34d399', '#f472b6', '#a78bfa', '#22d3ee', '#a3e635', '#f87171'];
  function palette() {
    var css = getComputedStyle(document.documentElement);
    var v = function (name, dflt) { return (css.getPropertyValue(name) || '').trim() || dflt; };
    var isDark = !!(dark && dark.matches);
    return { fg: v('--fg', isDark ? '#e6edf3' : '#1f2328'), muted: v('--muted', '#59636e'), line: v('--line', '#d1d9e0'), series: isDark ? DARK : LIGHT };
  }

  var DAY = 86400000;
  var RANGES = [['1d', DAY], ['1w', 7 * DAY], ['1m', 30 * DAY], ['all', 0]];
  var chosen = {}; // a chart's chosen time range survives the live refresh (keyed by its caption)

  /**
   * The x range from the data itself: a history inside one second gets a sub-second axis, never
   * years; a single instant gets an hour either side (ticks in minutes, not fractions of a second).
   */
  function xRange(kind) {
    return function (u, min, max) {
      if (min === null || max === null) return [min, max];
      var span = max - min;
      var pad = kind === 'number' ? 0 : span > 0 ? span * 0.02 : kind === 'date' ? DAY : DAY / 24;
      return [min - pad, max + pad];
    };
  }

  function rangeButtons(el, plot, data, key) {
    var bar = document.createElement('div');
    bar.className = 'ranges';
    bar.setAttribute('role', 'group');
    bar.setAttribute('aria-label', 'Time range');
    var first = data.x[0];
    var last = data.x[data.x.length - 1];
    function pick(name, span) {
      chosen[key] = name;
      plot.setScale('x', { min: span ? last - span : first, max: last });
      bar.querySelectorAll('button').forEach(function (b) { b.setAttribute('aria-pressed', String(b.getAttribute('data-range') === name)); });
    }
    RANGES.forEach(function (r) {
      var b = document.createElement('button');
      b.type = 'button';
      b.textContent = r[0];
      b.setAttribute('data-range', r[0]);
      b.setAttribute('aria-pressed', 'false');
      b.addEventListener('click', function () { pick(r[0], r[1]); });
      bar.appendChild(b);
    });
    el.parentNode.insertBefore(bar, el);
    var again = RANGES.filter(function (r) { return r[0] === chosen[key]; })[0] || RANGES[RANGES.length - 1];
    pick(again[0], again[1]);
  }

  function drawCharts(root) {
    plots.forEach(function (p) { p.destroy(); });
    plots = [];
    root.querySelectorAll('.chart .ranges').forEach(function (b) { b.remove(); });
    if (!window.uPlot) return;
    var colors = palette();
    var stepped = window.uPlot.paths.stepped({ align: 1 });
    root.querySelectorAll('.plot[data-chart]').forEach(function (el) {
      var src = document.getElementById(el.getAttribute('data-chart'));
      if (!src) return;
      var data = JSON.parse(src.textContent);
      el.textContent = '';
      if (!data.x.length) {
        el.innerHTML = '<p class="muted">Nothing to draw yet.</p>';
        return;
      }
      var timed = data.xKind !== 'number';
      var xName = data.xLabel || (data.xKind === 'date' ? 'Target date (UTC)' : 'Time (UTC)');
      var yName = (data.yLabel || 'Value') + (data.unit ? ' (' + data.unit + ')' : '');
      var series = [{
        label: xName,
        value: function (u, v) {
          if (v === null || v === undefined) return '—';
          if (data.xKind === 'time') return instantFmt.format(v) + ' UTC';
          if (data.xKind === 'date') return dateFmt.format(v);
          return chartNum.format(v);
        },
      }].concat(
        data.lines.map(function (l, i) {
          return {
            label: l.label,
            stroke: colors.series[i % colors.series.length],
            width: 2,
            spanGaps: true,
            paths: l.step ? stepped : undefined,
            points: { show: !!l.points || data.x.length < 40, size: 6, fill: colors.series[i % colors.series.length] },
            value: function (u, v) { return showChart(v, data.unit); },
          };
        }),
      );
      var axis = { stroke: colors.fg, grid: { stroke: colors.line, width: 1 }, ticks: { stroke: colors.line, width: 1 } };
      var opts = {
        width: Math.max(240, el.clientWidth),
        height: 240,
        ms: 1,
        tzDate: function (ts) { return window.uPlot.tzDate(new Date(ts), 'Etc/UTC'); },
        series: series,
        legend: { show: true, live: true },
        scales: { x: { time: timed, range: xRange(data.xKind) } },
        axes: [
          Object.assign({ label: xName, labelSize: 20 }, axis),
          Object.assign({ label: yName, labelSize: 20, size: 64, values: function (u, vals) { return vals.map(function (v) { return chartNum.format(v); }); } }, axis),
        ],
        hooks: {
          setScale: [function (u, key) {
            if (key === 'x') el.setAttribute('data-x-span', String(u.scales.x.max - u.scales.x.min));
          }],
        },
      };
      var plot = new window.uPlot(opts, [data.x].concat(data.lines.map(function (l) { return l.values; })), el);
      el.setAttribute('data-points', String(data.x.length));
      el.setAttribute('data-x-span', String(plot.scales.x.max - plot.scales.x.min));
      plots.push({ el: el, plot: plot, destroy: function () { if (sizer) sizer.unobserve(el); plot.destroy(); } });
      if (sizer) sizer.observe(el);
      if (data.xKind === 'time') {
        var cap = el.parentNode.querySelector('figcaption');
        rangeButtons(el, plot, data, cap ? cap.textContent : el.getAttribute('data-chart'));
      }
    });
    document.body.setAttribute('data-charts', String(plots.length));
  }

  // The visitor's scheme changes (dark mode at dusk): the charts redraw in its colours.
  if (dark) {
    var redraw = function () { drawCharts(document); };
    if (dark.addEventListener) dark.addEventListener('change', redraw);
    else if (dark.addListener) dark.addListener(redraw);
  }

  // Charts follow their box's width (a phone turned, a window resized).
  var sizer = window.ResizeObserver
    ? new ResizeObserver(function (entries) {
        entries.forEach(function (e) {
          plots.forEach(function (p) {
            if (p.el === e.target && Math.abs(p.plot.width - e.target.clientWidth) > 2) p.plot.setSize({ width: Math.max(240, e.target.clientWidth), height: 240 });
          });
        });
      })
    : null;

  var live = document.getElementById('live');
  var refreshing = false;
  var again = false;
  var timer = null;

  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(location.href, { headers: { Accept: 'text/html' }, cache: 'no-store' })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (text) {
        if (text === null) return;
        var doc = new DOMParser().parseFromString(text, 'text/html');
        var fresh = doc.getElementById('main');
        var main = document.getElementById('main');
        if (!fresh || !main) return;
        var focused = document.activeElement && main.contains(document.activeElement) ? document.activeElement.getAttribute('href') : null;
        // What the visitor is in the middle of survives the swap: a form typed into (data-dirty) and a
        // section showing a quote to confirm (data-keep) stay as they are, in the fresh page's place.
        var kept = Array.prototype.slice.call(main.querySelectorAll('[data-keep][id], form[data-dirty][id]'));
        main.innerHTML = fresh.innerHTML;
        kept.forEach(function (el) {
          var slot = document.getElementById(el.id);
          if (slot) slot.replaceWith(el);
        });
        drawCharts(main);
        if (focused) {
          var again_ = main.querySelector('[href="' + focused.replace(/"/g, '\\"') + '"]');
          if (again_) again_.focus();
        }
        document.body.setAttribute('data-updated', String(Date.now()));
        if (live) live.textContent = 'Updated ' + new Date().toISOString().slice(11, 19) + ' UTC';
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () {
        // At most one refresh a second however busy the workspace is; events meanwhile make one more.
        setTimeout(function () {
          refreshing = false;
          if (again) { again = false; schedule(); }
        }, 750);
      });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  }

  var workspace = document.body.getAttribute('data-workspace');
  var view = document.body.getAttribute('data-view');
  var lastId = null;

  function onFrame(text) {
    var id = null;
    var type = null;
    text.split('\n').forEach(function (line) {
      if (line.indexOf('id:') === 0) id = line.slice(3).trim();
      else if (line.indexOf('event:') === 0) type = line.slice(6).trim();
    });
    if (id) lastId = id;
    if (type) schedule();
  }

  function connect() {
    var headers = { Accept: 'text/event-stream', 'X-Workspace-Id': workspace };
    if (view) headers['X-View-Link'] = view;
    if (lastId) headers['Last-Event-ID'] = lastId;
    var retry = true;
    fetch('/api/events/stream', { headers: headers, cache: 'no-store' })
      .then(function (res) {
        // A refusal (the link was revoked, access withdrawn) is final: no retry loop.
        if (res.status >= 400 && res.status < 500) { retry = false; throw new Error('refused'); }
        if (!res.ok || !res.body) throw new Error('stream ' + res.status);
        document.body.setAttribute('data-live', 'on');
        var reader = res.body.getReader();
        var decoder = new TextDecoder();
        var buf = '';
        function pump() {
          return reader.read().then(function (r) {
            if (r.done) throw new Error('stream ended');
            buf += decoder.decode(r.value, { stream: true }).replace(/\r\n?/g, '\n');
            var i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              onFrame(buf.slice(0, i));
              buf = buf.slice(i + 2);
            }
            return pump();
          });
        }
        return pump();
      })
      .catch(function () {
        document.body.setAttribute('data-live', 'off');
        if (retry) setTimeout(connect, 2000 + Math.random() * 1000);
      });
  }

  // A form typed into is marked, so that a live refresh keeps it (see refresh).
  document.addEventListener('input', function (e) {
    var form = e.target && e.target.form;
    if (form && form.id) form.setAttribute('data-dirty', '1');
  });

  function start() {
    drawCharts(document);
    if (workspace && window.fetch && window.ReadableStream) connect();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
