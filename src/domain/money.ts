/** Credits are bigint nano-units inside; credits as JSON numbers with at most 9 decimals only at the edge. */
export const NANO_PER_CREDIT = 1_000_000_000n;
export const MAX_CREDITS = 1e12;

/**
 * Below this many credits (2^23 = 8,388,608, i.e. about 8.4e15 nano, a little under 2^53 nano) two
 * doubles are less than one nano apart, so `toCredits` and `toNano` are exact inverses and the
 * number prints in JSON as the same short decimal `formatCredits` gives. Above it a credit amount
 * still prints with at most 9 decimals, but may be off by a nano or so (the double's own spacing).
 */
export const EXACT_CREDITS = 2 ** 23;

/** The number's shortest decimal form as digits x 10^exp (what the client wrote, not its binary expansion). */
function decimalOf(x: number): { digits: bigint; exp: number } {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(Math.abs(x).toString())!;
  const frac = m[2] ?? '';
  return { digits: BigInt(m[1] + frac), exp: Number(m[3] ?? 0) - frac.length };
}

/** Whether a JSON number of credits is a whole number of nano-credits (at most 9 decimals). */
export function fitsNano(credits: number): boolean {
  return Number.isFinite(credits) && (credits === 0 || decimalOf(credits).exp + 9 >= 0);
}

/**
 * JSON number of credits -> nano, from the number's shortest decimal form (what the client wrote:
 * 21952073.003, not the binary expansion 21952073.00299999…), rounded half up to the nearest nano.
 */
export function toNano(credits: number): bigint {
  if (!Number.isFinite(credits)) throw new RangeError('credits must be finite');
  if (Math.abs(credits) > MAX_CREDITS) throw new RangeError('credits out of range');
  const { digits, exp } = decimalOf(credits);
  const shift = exp + 9; // nano = digits * 10^shift
  let nano: bigint;
  if (shift >= 0) nano = digits * 10n ** BigInt(shift);
  else {
    const div = 10n ** BigInt(-shift);
    nano = digits / div + ((digits % div) * 2n >= div ? 1n : 0n);
  }
  return credits < 0 ? -nano : nano;
}

/**
 * nano -> credits as an exact decimal string, at most 9 decimals, no trailing zeros ("16.683973774",
 * "-0.5", "0"). Integer arithmetic only: the one formatter of money (sentences use it directly).
 */
export function formatCredits(nano: bigint): string {
  const neg = nano < 0n;
  const abs = neg ? -nano : nano;
  const frac = (abs % NANO_PER_CREDIT).toString().padStart(9, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / NANO_PER_CREDIT}${frac ? `.${frac}` : ''}`;
}

/**
 * nano -> JSON number of credits: the double nearest the exact decimal (no float arithmetic), so
 * JSON prints it back as that decimal (exact below EXACT_CREDITS). For presenters, and for the
 * documents made once where they happen (error bodies, event data: `withCredits`).
 */
export function toCredits(nano: bigint): number {
  return Number(formatCredits(nano));
}

/**
 * A document whose bigint values are nano amounts, with each of them as credits (deep): how an
 * error's details and an event's data reach the edge, where they are shown verbatim.
 */
export function withCredits<T>(value: T): T {
  if (typeof value === 'bigint') return toCredits(value) as T;
  if (Array.isArray(value)) return value.map(withCredits) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withCredits(v)])) as T;
  }
  return value;
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
