/**
 * Numbers as the pages show them. The same rules are in assets/app.js (the live update rewrites
 * nothing itself: it swaps in the server's markup, so these are the only formatters that matter).
 * Metrics carry a unit (null until the API names one): a value is shown with it when present.
 */
const plain = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const credits = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export function fmtValue(v: number | null | undefined, unit: string | null = null): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const n = plain.format(v);
  return unit ? `${n} ${unit}` : n;
}

export function fmtCredits(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return `${credits.format(v)} cr`;
}

export function fmtPercent(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '—';
  return `${(p * 100).toFixed(1)}%`;
}

/** A signed difference in the metric's unit (+12.5, −3). */
export function fmtDelta(v: number | null | undefined, unit: string | null = null): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const s = fmtValue(Math.abs(v), unit);
  return v > 0 ? `+${s}` : v < 0 ? `−${s}` : s;
}

/** An instant as UTC, minute precision: the same for every visitor and in the tests. */
export function fmtInstant(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** An instant as UTC to the millisecond: the rows of a chart's data table (trades can share a second). */
export function fmtInstantMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}
