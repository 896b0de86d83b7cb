/**
 * How a book's pool remainder goes back to its funders (issue 28): pro rata of what each put in,
 * in exact bigint arithmetic. Each share is rounded down; the dust (less than one nano-credit per
 * funder) goes to the first funder, the one who funded the book first.
 */
export interface Contribution<K> {
  key: K;
  amount: bigint;
}

export function splitProRata<K>(remainder: bigint, funders: ReadonlyArray<Contribution<K>>): Array<Contribution<K>> {
  if (remainder < 0n) throw new RangeError(`a remainder to split must be >= 0, got ${remainder}`);
  if (!funders.length) throw new RangeError('a remainder needs at least one funder to go to');
  if (funders.some((f) => f.amount <= 0n)) throw new RangeError('every funder must have put in a positive amount');
  const total = funders.reduce((s, f) => s + f.amount, 0n);
  const shares = funders.map((f) => ({ key: f.key, amount: (remainder * f.amount) / total }));
  shares[0].amount += remainder - shares.reduce((s, f) => s + f.amount, 0n);
  return shares;
}
