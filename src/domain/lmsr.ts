// Binary LMSR market maker ("higher" / "lower") on bigint nano units.
// Pure: no I/O, no imports. All rounding favours the house so the pool can
// always pay what the outstanding shares claim (funder loses at most L).

export const NANO = 1_000_000_000n;
export type Direction = 'higher' | 'lower';
export interface BookState {
  qHigher: bigint;
  qLower: bigint;
  b: bigint;
}
export const MIN_P = 0.01,
  MAX_P = 0.99;

const EPS = Number.EPSILON;
// Largest double below 1: the true price is strictly inside (0,1) even when
// the float rounds to an endpoint, so clamp to the nearest interior value.
const P_CEIL = 1 - EPS / 2;

// ---------- float helpers (all overflow-free) ----------

/** ln(1 + e^z) */
function softplus(z: number): number {
  return z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
}

/** ln(e^a + e^c) */
function lse(a: number, c: number): number {
  const m = Math.max(a, c);
  return m + Math.log1p(Math.exp(-Math.abs(a - c)));
}

/** ln(e^k - 1), k > 0 */
function lnExpm1(k: number): number {
  return k > 1 ? k + Math.log1p(-Math.exp(-k)) : Math.log(Math.expm1(k));
}

/** Price of the side whose "distance" is d = (q_other - q_side)/b: 1/(1+e^d). */
function sideP(d: number): number {
  return 1 / (1 + Math.exp(d));
}

/**
 * ΔC/b for buying x = s/b shares of a side at distance d: ln(1 + p(e^x - 1)).
 * Two branches so neither cancels catastrophically nor overflows.
 */
function buyDelta(x: number, d: number): number {
  if (x <= 1) return Math.log1p(sideP(d) * Math.expm1(x));
  return lse(x - softplus(d), -softplus(-d));
}

/** -ΔC/b for selling x = s/b shares of a side at distance d: -ln(1 + p(e^-x - 1)). */
function sellDelta(x: number, d: number): number {
  const y = sideP(d) * Math.expm1(-x);
  if (y > -0.5) return -Math.log1p(y);
  return -lse(-softplus(-d), -softplus(d) - x);
}

/**
 * Relative error margin for the float deltas f. Inputs x and d carry a few ulps
 * of error and the relative condition numbers of f in x and d are <= |x|+1 and
 * 1 per unit of d, so the relative error is O(eps*(|x|+|d|+1)); the branches
 * above avoid cancellation, and 64x is a generous cushion.
 */
function tol(x: number, d: number): number {
  return 64 * EPS * (Math.abs(x) + Math.abs(d) + 4);
}

// ---------- book helpers ----------

function sign(dir: Direction): 1 | -1 {
  if (dir === 'higher') return 1;
  if (dir === 'lower') return -1;
  throw new RangeError(`invalid direction: ${String(dir)}`);
}

function assertBook(book: BookState): void {
  if (book.b <= 0n) throw new RangeError('book.b must be positive');
}

/** (qLower - qHigher)/b: the exponent in p(higher) = 1/(1+e^dH). */
function dHigher(book: BookState): number {
  return Number(book.qLower - book.qHigher) / Number(book.b);
}

/** Distance of `dir` (q_other - q_dir)/b. */
function dSide(book: BookState, dir: Direction): number {
  return sign(dir) * dHigher(book);
}

function withShares(book: BookState, dir: Direction, delta: bigint): BookState {
  return dir === 'higher'
    ? { qHigher: book.qHigher + delta, qLower: book.qLower, b: book.b }
    : { qHigher: book.qHigher, qLower: book.qLower + delta, b: book.b };
}

function qOf(book: BookState, dir: Direction): bigint {
  return dir === 'higher' ? book.qHigher : book.qLower;
}

function ceilBig(v: number): bigint {
  return BigInt(Math.ceil(v));
}

function floorBig(v: number): bigint {
  return BigInt(Math.floor(v));
}

function maxBig(a: bigint, c: bigint): bigint {
  return a > c ? a : c;
}

function minBig(a: bigint, c: bigint): bigint {
  return a < c ? a : c;
}

/** Validated target p(higher) -> target value of dH = ln((1-t)/t). */
function targetDH(targetP: number): number {
  if (!Number.isFinite(targetP) || targetP <= 0 || targetP >= 1) {
    throw new RangeError('targetP must be in (0,1)');
  }
  return Math.log1p(-targetP) - Math.log(targetP);
}

/** Upper bound on C(q) (nano) covering float error. */
function costUpper(book: BookState): number {
  const c = costFunction(book);
  return c + (Math.abs(c) + Number(book.b)) * tol(0, dHigher(book));
}

// ---------- exported API ----------

export function openBook(liquidity: bigint, p0: number): BookState {
  if (typeof liquidity !== 'bigint' || liquidity <= 0n) {
    throw new RangeError('liquidity must be a positive bigint');
  }
  if (typeof p0 !== 'number' || !Number.isFinite(p0)) throw new RangeError('p0 must be finite');
  const p = Math.min(MAX_P, Math.max(MIN_P, p0));
  const m = Math.min(p, 1 - p); // 1-p is exact for p in [0.5,1]
  const lnInv = -Math.log(m);
  const imbalance = Math.log((1 - m) / m); // >= 0
  let b = floorBig(Number(liquidity) / lnInv);
  for (;;) {
    if (b < 1n) throw new RangeError('liquidity too small for p0');
    // Round the imbalance down: lowers C(q0), keeping C(q0) <= L.
    const q0 = floorBig(Number(b) * imbalance);
    const book: BookState = p >= 0.5 ? { qHigher: q0, qLower: 0n, b } : { qHigher: 0n, qLower: q0, b };
    // Float division may land b a few ulps high; shrink until C(q0) <= L surely.
    const excess = ceilBig(costUpper(book)) - liquidity;
    if (excess <= 0n) return book;
    b -= maxBig(maxBig(1n, b / 1_000_000_000_000n), ceilBig(Number(excess) / lnInv));
  }
}

export function probability(book: BookState): number {
  assertBook(book);
  const p = sideP(dHigher(book));
  return Math.min(P_CEIL, Math.max(Number.MIN_VALUE, p));
}

export function costFunction(book: BookState): number {
  assertBook(book);
  // max(qH,qL) + b*ln(1+e^-|d|): the large part is taken exactly from bigint.
  const hi = book.qHigher > book.qLower ? book.qHigher : book.qLower;
  return Number(hi) + Number(book.b) * Math.log1p(Math.exp(-Math.abs(dHigher(book))));
}

/** Cost (nano, rounded up, safe) of buying `shares` of dir. */
function buyCost(book: BookState, dir: Direction, shares: bigint, next: BookState): bigint {
  if (shares === 0n) return 0n;
  const x = Number(shares) / Number(book.b);
  const d = dSide(book, dir);
  const f = buyDelta(x, d);
  const t = tol(x, d);
  const stable = ceilBig(Number(book.b) * f * (1 + t));
  // Also never below the naive float difference (the spec's guard).
  const naive = ceilBig(costFunction(next) - costFunction(book));
  // Any positive quantity of shares has positive exact cost, so at least 1 nano.
  return maxBig(maxBig(stable, naive), 1n);
}

/** Proceeds (nano, rounded down, safe) of selling `shares` of dir. */
function sellProceeds(book: BookState, dir: Direction, shares: bigint, next: BookState): bigint {
  if (shares === 0n) return 0n;
  const x = Number(shares) / Number(book.b);
  const d = dSide(book, dir);
  const f = sellDelta(x, d);
  const t = tol(x, d);
  const stable = floorBig(Number(book.b) * f * (1 - t));
  const naive = floorBig(costFunction(book) - costFunction(next));
  return maxBig(minBig(stable, naive), 0n);
}

export function buyShares(
  book: BookState,
  dir: Direction,
  shares: bigint,
): { shares: bigint; cost: bigint; book: BookState } {
  assertBook(book);
  sign(dir);
  if (shares < 0n) throw new RangeError('shares must be >= 0');
  const next = withShares(book, dir, shares);
  return { shares, cost: buyCost(book, dir, shares, next), book: next };
}

export function buyWithSpend(
  book: BookState,
  dir: Direction,
  spend: bigint,
): { shares: bigint; cost: bigint; book: BookState } {
  assertBook(book);
  const d = dSide(book, dir);
  if (spend <= 0n) throw new RangeError('spend must be positive');
  // Closed form: e^x = 1 + (e^k - 1)/p, in log space so nothing overflows.
  const k = Number(spend) / Number(book.b);
  const x = softplus(lnExpm1(k) + softplus(d));
  let shares = floorBig(Number(book.b) * x);
  if (shares < 0n) shares = 0n;
  // Float guess may be a few nano high; step down (doubling) until affordable.
  let step = 1n;
  for (;;) {
    const r = buyShares(book, dir, shares);
    if (r.cost <= spend) return r;
    shares = shares > step ? shares - step : 0n;
    step *= 2n;
  }
}

export function sellShares(
  book: BookState,
  dir: Direction,
  shares: bigint,
): { proceeds: bigint; book: BookState } {
  assertBook(book);
  sign(dir);
  if (shares < 0n) throw new RangeError('shares must be >= 0');
  if (shares > 0n && shares > qOf(book, dir)) throw new RangeError('cannot sell more shares than the book holds');
  const next = withShares(book, dir, -shares);
  return { proceeds: sellProceeds(book, dir, shares, next), book: next };
}

/** Shares of dir to buy (rounded up, so the target is reached) to move p(higher) to targetP. */
function sharesToMove(book: BookState, dir: Direction, targetP: number): bigint {
  const s = sign(dir);
  const x = s * (dHigher(book) - targetDH(targetP));
  if (!(x > 0)) return 0n;
  return ceilBig(Number(book.b) * x);
}

export function costToMove(book: BookState, dir: Direction, targetP: number): bigint {
  assertBook(book);
  const shares = sharesToMove(book, dir, targetP);
  return buyCost(book, dir, shares, withShares(book, dir, shares));
}

export function buyToProbability(
  book: BookState,
  dir: Direction,
  targetP: number,
  maxBudget: bigint,
): { shares: bigint; cost: bigint; book: BookState; reachedTarget: boolean } {
  assertBook(book);
  if (maxBudget < 0n) throw new RangeError('maxBudget must be >= 0');
  const shares = sharesToMove(book, dir, targetP);
  const full = buyShares(book, dir, shares);
  if (full.cost <= maxBudget) return { ...full, reachedTarget: true };
  if (maxBudget === 0n) return { shares: 0n, cost: 0n, book, reachedTarget: false };
  return { ...buyWithSpend(book, dir, maxBudget), reachedTarget: false };
}

export function sellToProbability(
  book: BookState,
  dir: Direction,
  targetP: number,
  maxShares: bigint,
): { shares: bigint; proceeds: bigint; book: BookState; reachedTarget: boolean } {
  assertBook(book);
  if (maxShares < 0n) throw new RangeError('maxShares must be >= 0');
  const s = sign(dir);
  // Selling dir moves dH the opposite way to buying it.
  const x = -s * (dHigher(book) - targetDH(targetP));
  const needed = x > 0 ? ceilBig(Number(book.b) * x) : 0n;
  const cap = minBig(maxShares, maxBig(qOf(book, dir), 0n));
  const shares = minBig(needed, cap);
  const r = sellShares(book, dir, shares);
  return { shares, proceeds: r.proceeds, book: r.book, reachedTarget: shares === needed };
}

export function redeemPairs(book: BookState, pairs: bigint): BookState {
  assertBook(book);
  if (pairs < 0n) throw new RangeError('pairs must be >= 0');
  if (pairs > book.qHigher || pairs > book.qLower) throw new RangeError('not enough shares to redeem');
  // C(q - k(1,1)) = C(q) - k exactly, so paying k nano keeps the pool invariant.
  return { qHigher: book.qHigher - pairs, qLower: book.qLower - pairs, b: book.b };
}

function assertRange(rangeMin: number, rangeMax: number): void {
  if (!Number.isFinite(rangeMin) || !Number.isFinite(rangeMax) || !(rangeMax > rangeMin)) {
    throw new RangeError('need finite rangeMin < rangeMax');
  }
}

/**
 * What a holding would return if sold now, every share of it: matched pairs pay 1 each; the rest
 * sells into the book, down the price curve (lifted by any shares beyond the book's own, as a sale
 * is in planTrade). At most the holding's worth at the consensus: the price falls as it sells.
 */
export function liquidationValue(book: BookState, sharesHigher: bigint, sharesLower: bigint): bigint {
  const pairs = minBig(sharesHigher, sharesLower);
  const rest = sharesHigher > pairs ? sharesHigher - pairs : sharesLower - pairs;
  if (rest <= 0n) return pairs;
  const dir: Direction = sharesHigher > pairs ? 'higher' : 'lower';
  const lift = maxBig(rest - qOf(book, dir), 0n);
  const lifted = lift > 0n ? { ...book, qHigher: book.qHigher + lift, qLower: book.qLower + lift } : book;
  return pairs + sellShares(lifted, dir, rest).proceeds;
}

export function payoutFraction(value: number, rangeMin: number, rangeMax: number): number {
  assertRange(rangeMin, rangeMax);
  if (Number.isNaN(value)) throw new RangeError('value is NaN');
  const v = (value - rangeMin) / (rangeMax - rangeMin);
  return Math.min(1, Math.max(0, v));
}

/** Exact dyadic rational of a double in [0,1]: v = num / 2^k. */
function dyadic(v: number): { num: bigint; den: bigint } {
  let k = 0n;
  let x = v;
  while (!Number.isInteger(x)) {
    x *= 2; // exact for doubles
    k += 1n;
  }
  return { num: BigInt(x), den: 1n << k };
}

export function holderPayout(sharesHigher: bigint, sharesLower: bigint, v: number): bigint {
  if (sharesHigher < 0n || sharesLower < 0n) throw new RangeError('shares must be >= 0');
  if (!(v >= 0 && v <= 1)) throw new RangeError('v must be in [0,1]');
  // v taken exactly as a rational: one floor, never over-pays.
  const { num, den } = dyadic(v);
  return (sharesHigher * num + sharesLower * (den - num)) / den;
}

export function consensusOf(p: number, rangeMin: number, rangeMax: number): number {
  assertRange(rangeMin, rangeMax);
  return rangeMin + p * (rangeMax - rangeMin);
}

export function probabilityOf(consensus: number, rangeMin: number, rangeMax: number): number {
  assertRange(rangeMin, rangeMax);
  return (consensus - rangeMin) / (rangeMax - rangeMin);
}
