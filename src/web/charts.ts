import { html, jsonBlock, type Html } from './html';
import { fmtDelta, fmtValue } from './format';

/** One line of a chart: values aligned on the chart's x. */
export interface Line {
  label: string;
  values: (number | null)[];
  /** Hold each value until the next (consensus after each trade, readings). */
  step?: boolean;
  /** Draw the points (the term structure: one point per horizon). */
  points?: boolean;
}

export interface ChartData {
  /** Milliseconds since the epoch (time and date charts) or plain numbers, ascending; equal instants repeat. */
  x: number[];
  lines: Line[];
  /** How the x axis reads: instants, calendar dates (target dates), or plain numbers (a forecast probability). */
  xKind: 'time' | 'date' | 'number';
  /** The x axis' name when it is a number. */
  xLabel?: string;
  /** The y axis' name (the unit is added to it, and to every value shown). */
  yLabel?: string;
  unit: string | null;
}

let seq = 0;

/**
 * Series given as [x, v] points, merged on one ascending x (uPlot's aligned data); a missing point is
 * null. Points at the same x within one series are all kept (two trades in the same millisecond are
 * two steps): the x repeats as often as the series that repeats it most.
 */
export function align(series: { label: string; points: [number, number | null][]; step?: boolean; points_?: boolean }[]): { x: number[]; lines: Line[] } {
  const repeats = new Map<number, number>();
  for (const s of series) {
    const seen = new Map<number, number>();
    for (const [t] of s.points) seen.set(t, (seen.get(t) ?? 0) + 1);
    for (const [t, n] of seen) repeats.set(t, Math.max(n, repeats.get(t) ?? 0));
  }
  const xs = [...repeats.keys()].sort((a, b) => a - b).flatMap((t) => Array<number>(repeats.get(t)!).fill(t));
  const first = new Map<number, number>();
  xs.forEach((t, i) => {
    if (!first.has(t)) first.set(t, i);
  });
  const lines = series.map((s) => {
    const values: (number | null)[] = xs.map(() => null);
    const used = new Map<number, number>();
    for (const [t, v] of s.points) {
      const k = used.get(t) ?? 0;
      used.set(t, k + 1);
      values[first.get(t)! + k] = v;
    }
    // A stepped line (consensus after each trade, readings) holds its value until the next point,
    // and to the chart's right edge: the latest consensus is where the book stands now.
    if (s.step) for (let i = 1; i < values.length; i++) if (values[i] === null) values[i] = values[i - 1];
    return { label: s.label, values, step: s.step, points: s.points_ };
  });
  return { x: xs, lines };
}

/**
 * A chart drawn by assets/app.js with uPlot from the JSON beside it; the table inside <details> is
 * the same data for screen readers and for a visitor without script.
 */
export function chart(title: string, data: ChartData, table: Html): Html {
  seq = (seq + 1) % 1_000_000;
  const id = `chart-${seq}`;
  return html`<figure class="chart">
<figcaption>${title}</figcaption>
<div class="plot" data-chart="${id}" role="img" aria-label="${title}"></div>
${jsonBlock(id, data)}
<details><summary>Data table</summary>${table}</details>
</figure>`;
}

/** A sparkline as inline SVG (no script): the trend of a metric's readings. */
export function sparkline(points: [number, number][], unit: string | null): Html {
  if (points.length < 2) return html`<span class="muted">${points.length ? fmtValue(points[0][1], unit) : 'no readings'}</span>`;
  const ts = points.map((p) => p[0]);
  const vs = points.map((p) => p[1]);
  const [t0, t1] = [Math.min(...ts), Math.max(...ts)];
  const [v0, v1] = [Math.min(...vs), Math.max(...vs)];
  const x = (t: number) => (t1 === t0 ? 50 : ((t - t0) / (t1 - t0)) * 100);
  const y = (v: number) => (v1 === v0 ? 12 : 22 - ((v - v0) / (v1 - v0)) * 20);
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(2)},${y(p[1]).toFixed(2)}`).join(' ');
  const label = `Trend over ${points.length} readings: from ${fmtValue(points[0][1], unit)} to ${fmtValue(points[points.length - 1][1], unit)}`;
  return html`<svg class="spark" viewBox="0 0 100 24" preserveAspectRatio="none" role="img" aria-label="${label}"><path d="${d}" vector-effect="non-scaling-stroke"/></svg>`;
}

/**
 * The approved-vs-declined gap of one metric and date, drawn on the book's range: a bar from the
 * declined consensus to the approved one (SVG, no script).
 */
export function gapBar(range: { min: number; max: number }, approved: number | null, declined: number | null, unit: string | null): Html {
  const span = range.max - range.min || 1;
  const pos = (v: number) => Math.min(100, Math.max(0, ((v - range.min) / span) * 100));
  const label =
    approved === null || declined === null
      ? `Approved ${fmtValue(approved, unit)}, declined ${fmtValue(declined, unit)}: no gap yet`
      : `Approved ${fmtValue(approved, unit)}, declined ${fmtValue(declined, unit)}: gap ${fmtDelta(approved - declined, unit)}`;
  const marks: Html[] = [];
  if (approved !== null && declined !== null) {
    const [a, b] = [pos(declined), pos(approved)].sort((p, q) => p - q);
    marks.push(html`<rect class="${approved >= declined ? 'gap up' : 'gap down'}" x="${a.toFixed(2)}" y="7" width="${Math.max(0.5, b - a).toFixed(2)}" height="6"/>`);
  }
  if (declined !== null) marks.push(html`<circle class="declined" cx="${pos(declined).toFixed(2)}" cy="10" r="3.2"/>`);
  if (approved !== null) marks.push(html`<circle class="approved" cx="${pos(approved).toFixed(2)}" cy="10" r="3.2"/>`);
  return html`<svg class="gapbar" viewBox="-4 0 108 20" role="img" aria-label="${label}"><line class="track" x1="0" y1="10" x2="100" y2="10"/>${marks}</svg>`;
}
