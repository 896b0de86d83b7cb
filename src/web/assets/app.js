// The pages' one script (served at /assets/app.js, no build step): draws the charts with uPlot from
// the JSON beside each one, and keeps the page live from GET /api/events/stream (Server-Sent Events
// read with fetch, so the workspace and view link travel as headers; resumes with Last-Event-ID).
// On an event it fetches the same page again and swaps <main>: the figures stay exactly the ones the
// server renders through the API, and nothing reloads.
(function () {
  'use strict';
  var fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
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

  function show(v, unit) {
    return v === null || v === undefined ? '—' : fmt.format(v) + (unit ? ' ' + unit : '');
  }
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

  /** The x range from the data itself: a history inside one second gets a sub-second axis, never years. */
  function xRange(kind) {
    return function (u, min, max) {
      if (min === null || max === null) return [min, max];
      var span = max - min;
      var pad = kind === 'number' ? 0 : span > 0 ? span * 0.02 : kind === 'date' ? DAY : 500;
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
        // A trade being prepared survives the swap (the visitor's input and quote stay).
        var form = document.getElementById('trade-form');
        var freshForm = fresh.querySelector('#trade-form');
        main.innerHTML = fresh.innerHTML;
        var slot = document.getElementById('trade-form');
        if (form && slot && freshForm) slot.replaceWith(form);
        drawCharts(main);
        setupTrade();
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

  // Trading from the market page: a quote (dry run), then the same trade confirmed. The session
  // cookie (or nothing) goes with the request; the API decides, and its sentence is shown as is.
  function setupTrade() {
    var form = document.getElementById('trade-form');
    if (!form || form.getAttribute('data-ready')) return;
    form.setAttribute('data-ready', '1');
    var out = document.getElementById('trade-quote');
    var confirmButton = document.getElementById('trade-confirm');
    var pending = null;
    function request(dryRun) {
      var amount = Number(form.elements.amount.value);
      var direction = form.elements.direction.value;
      var body = { marketId: form.getAttribute('data-market'), direction: direction, amount: amount };
      if (dryRun) body.dryRun = true;
      var headers = { 'Content-Type': 'application/json', Accept: 'application/json', 'X-Workspace-Id': workspace };
      if (!dryRun) headers['Idempotency-Key'] = pending.key;
      return fetch('/api/predictions/trade', { method: 'POST', headers: headers, body: JSON.stringify(body), credentials: 'same-origin' }).then(function (res) {
        return res.json().then(function (json) { return { ok: res.ok, body: json }; });
      });
    }
    function say(text, state) {
      out.textContent = text;
      out.setAttribute('data-state', state);
    }
    form.addEventListener('input', function () {
      pending = null;
      confirmButton.hidden = true;
    });
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      confirmButton.hidden = true;
      say('Pricing…', 'busy');
      request(true).then(function (r) {
        if (!r.ok) return say(r.body.error || 'The quote failed.', 'error');
        var q = r.body;
        pending = { key: (window.crypto && window.crypto.randomUUID) ? window.crypto.randomUUID() : String(Date.now()) + Math.random() };
        say('Quote: ' + fmt.format(q.shares) + ' shares ' + q.direction + ' for ' + fmt.format(q.cost) + ' cr; the consensus would move from ' + show(q.prevConsensus) + ' to ' + show(q.consensus) + '.' + (q.affordable === false ? ' Your balance does not cover it (short ' + fmt.format(q.shortfall) + ' cr).' : ''), 'quote');
        out.setAttribute('data-consensus', String(q.consensus));
        if (q.affordable !== false) {
          confirmButton.hidden = false;
          confirmButton.focus();
        }
      }).catch(function () { say('The quote could not be fetched; try again.', 'error'); });
    });
    confirmButton.addEventListener('click', function () {
      if (!pending) return;
      confirmButton.hidden = true;
      say('Trading…', 'busy');
      request(false).then(function (r) {
        if (!r.ok) return say(r.body.error || 'The trade failed.', 'error');
        pending = null;
        say('Done: ' + fmt.format(r.body.shares) + ' shares ' + r.body.direction + ' for ' + fmt.format(r.body.cost) + ' cr; consensus now ' + show(r.body.consensus) + '.', 'done');
        out.setAttribute('data-consensus', String(r.body.consensus));
      }).catch(function () {
        // Sent again with the same Idempotency-Key, it is applied at most once.
        say('The trade could not be confirmed; try again.', 'error');
        confirmButton.hidden = false;
      });
    });
  }

  function start() {
    setupTrade();
    drawCharts(document);
    if (workspace && window.fetch && window.ReadableStream) connect();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
