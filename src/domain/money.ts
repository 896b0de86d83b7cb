/** Credits are bigint nano-units inside; whole-credit JSON numbers only at the edge. */
export const NANO_PER_CREDIT = 1_000_000_000n;
export const MAX_CREDITS = 1e12;

/** JSON number of credits -> nano; rounds to the nearest nano (at most 9 decimals are meaningful). */
export function toNano(credits: number): bigint {
  if (!Number.isFinite(credits)) throw new RangeError('credits must be finite');
  if (Math.abs(credits) > MAX_CREDITS) throw new RangeError('credits out of range');
  const neg = credits < 0;
  const [whole, frac = ''] = Math.abs(credits).toFixed(9).split('.');
  const nano = BigInt(whole) * NANO_PER_CREDIT + BigInt(frac.padEnd(9, '0'));
  return neg ? -nano : nano;
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
