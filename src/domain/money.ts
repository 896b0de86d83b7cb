/** Credits are bigint nano-units inside; whole-credit JSON numbers only at the edge. */
export const NANO_PER_CREDIT = 1_000_000_000n;
export const MAX_CREDITS = 1e12;

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

/** nano -> JSON number of credits (display; exact up to 2^53 nano-units). */
export function toCredits(nano: bigint): number {
  const neg = nano < 0n;
  const abs = neg ? -nano : nano;
  const value = Number(abs / NANO_PER_CREDIT) + Number(abs % NANO_PER_CREDIT) / 1e9;
  return neg ? -value : value;
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
