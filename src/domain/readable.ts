/**
 * Numbers as a person reads them (issue 56): at most 9 decimals in any answer. LMSR prices,
 * probabilities, consensus values and impacts are floats (a book opened at 420 reads
 * 420.0000000008037); credits are exact nano amounts, 9 decimals already. Rounded once, at the edge
 * every answer passes (runRoute's result, a refusal's body): nothing stored or computed is rounded.
 */
export const MAX_DECIMALS = 9;

export function roundNumber(x: number): number {
  if (Number.isInteger(x) || !Number.isFinite(x)) return x;
  const r = Number(x.toFixed(MAX_DECIMALS));
  return r === 0 ? 0 : r; // no -0 in JSON
}

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/** Answers built once and already rounded (the OpenAPI document, the catalog): not walked again per request. */
const READABLE = new WeakSet<object>();

/** `value` rounded once and remembered as readable: for an answer built once and served many times. */
export function readableOnce<T extends object>(value: T): T {
  const r = readableNumbers(value);
  READABLE.add(r);
  return r;
}

/** `value` with every number rounded to 9 decimals; the same reference when nothing needed it. */
export function readableNumbers<T>(value: T): T {
  if (typeof value === 'number') return roundNumber(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (READABLE.has(value)) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = readableNumbers(value[i] as unknown);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  if (!isPlain(value)) return value;
  let out: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(value)) {
    const r = readableNumbers(v);
    if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
  }
  return (out ?? value) as T;
}
