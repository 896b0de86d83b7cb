import { NANO_PER_CREDIT } from './money';

/**
 * Credits <-> token units, exact in integers. A credit is worth `creditValueUsd`, the token (USDC) has
 * `decimals` decimals, so one credit is `unitsPerCredit` token units; it must be a whole number of
 * units (0.01 USD at 6 decimals: 10,000), else the conversion could not be exact both ways.
 */
export function unitsPerCredit(creditValueUsd: number, decimals: number): bigint {
  const scaled = creditValueUsd * 10 ** decimals;
  const units = Math.round(scaled);
  if (units < 1 || Math.abs(scaled - units) > 1e-6 * Math.max(1, units)) {
    throw new RangeError(`CREDIT_VALUE_USD ${creditValueUsd} is not a whole number of token units at ${decimals} decimals`);
  }
  return BigInt(units);
}

/** The buy fee in basis points (2.5% -> 250); a fee finer than a basis point is refused. */
export function feeBasisPoints(percent: number): bigint {
  const bps = Math.round(percent * 100);
  if (bps < 0 || Math.abs(percent * 100 - bps) > 1e-6) throw new RangeError(`BUY_FEE_PERCENT ${percent} is finer than a basis point`);
  return BigInt(bps);
}

export interface DepositSplit {
  /** Everything paid, in nano-credits (rounded down to the nano). */
  gross: bigint;
  /** Credits issued to the depositor: floor(paid / (creditValue * (1 + fee))) whole credits, in nano. */
  credits: bigint;
  /** The rest of gross: the fee account's. */
  fee: bigint;
}

/** Spec §4.3: credits issued = floor(amount paid / (creditValueUsd * (1 + buyFeePercent/100))); gross = credits + fee. */
export function depositSplit(paidUnits: bigint, upc: bigint, feeBps: bigint): DepositSplit {
  if (paidUnits < 0n) throw new RangeError('paid amount must not be negative');
  const gross = (paidUnits * NANO_PER_CREDIT) / upc;
  const wholeCredits = (paidUnits * 10_000n) / (upc * (10_000n + feeBps));
  const credits = wholeCredits * NANO_PER_CREDIT;
  return { gross, credits, fee: gross - credits };
}

/** Token units paid out for `amount` nano-credits, or null when that is not a whole number of units. */
export function withdrawalUnits(amount: bigint, upc: bigint): bigint | null {
  const n = amount * upc;
  return n % NANO_PER_CREDIT === 0n ? n / NANO_PER_CREDIT : null;
}

/** Nano-credits that `units` token units are worth (exact when units came from withdrawalUnits). */
export function unitsToNano(units: bigint, upc: bigint): bigint {
  return (units * NANO_PER_CREDIT) / upc;
}

/** The delay before re-check number `n` (0-based): doubles from `first`, capped. */
export function recheckDelay(n: number, first: number, cap: number): number {
  return Math.min(cap, first * 2 ** Math.min(n, 30));
}
