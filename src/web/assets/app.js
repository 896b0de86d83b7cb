// The pages' one script (served at /assets/app.js, no build step): draws the charts with uPlot from
// the JSON beside each one, and keeps the page live from GET /api/events/stream (Server-Sent Events
// read with fetch, so the workspace and view link travel as headers; resumes with Last-Event-ID).
// On an event it fetches the same page again and swaps <main>: the figures stay exactly the ones the
// server renders through the API, and nothing reloads.
(function () {
  'use strict';
  var fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
  var COLORS = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];
  var plots = [];

  function show(v, unit) {
    return v === null || v === undefined ? '—' : fmt.format(v) + (unit ? ' ' + unit : '');
  }

  function drawCharts(root) {
    plots.forEach(function (p) { p.destroy(); });
    plots = [];
    if (!window.uPlot) return;
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
      var series = [{ label: data.xLabel || (data.xKind === 'date' ? 'Target date' : 'Time') }].concat(
        data.lines.map(function (l, i) {
          return {
            label: l.label,
            stroke: COLORS[i % COLORS.length],
            width: 2,
            spanGaps: true,
            paths: l.step ? stepped : undefined,
            points: { show: !!l.points || data.x.length < 40, size: 6 },
            value: function (u, v) { return show(v, data.unit); },
          };
        }),
      );
      var opts = {
        width: Math.max(240, el.clientWidth),
        height: 240,
        series: series,
        scales: { x: { time: data.xKind !== 'number' } },
        axes: [{}, { size: 64, values: function (u, vals) { return vals.map(function (v) { return fmt.format(v); }); } }],
      };
      var plot = new window.uPlot(opts, [data.x].concat(data.lines.map(function (l) { return l.values; })), el);
      plots.push({ el: el, plot: plot, destroy: function () { if (sizer) sizer.unobserve(el); plot.destroy(); } });
      if (sizer) sizer.observe(el);
    });
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
