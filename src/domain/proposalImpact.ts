/**
 * What a proposal's conditional books say it would do: per metric and date, the approved and the
 * declined branch's consensus and their difference. Pure: books come in, entries go out.
 */

/** The part of a book the impact reads. */
export interface BranchBook {
  metricId: string;
  metricName: string;
  targetDate: string;
  resolvesOn: string;
  branch: 'approved' | 'declined' | null;
  createdAt: Date;
}

export interface BranchImpact<M> {
  market: M;
  consensus: number | null;
}

export interface ImpactEntry<M> {
  metricId: string;
  metricName: string;
  targetDate: string;
  resolvesOn: string;
  expected: boolean;
  approved: BranchImpact<M> | null;
  declined: BranchImpact<M> | null;
  /** approved consensus - declined consensus; null when either is null (an unfunded branch is no value). */
  impact: number | null;
}

export interface ImpactBasis {
  metricIds: string[];
  headlineMetricId: string | null;
  headlineTargetDate: string | null;
}

/**
 * The book of a branch is the newest one for that date (a voided branch keeps its final consensus,
 * which is what was decided on). Expected metrics first, in the order the proposer gave, then in
 * the order the books came.
 */
export function proposalImpact<M extends BranchBook>(p: ImpactBasis, markets: M[], consensusOf: (mk: M) => number | null): ImpactEntry<M>[] {
  const byKey = new Map<string, ImpactEntry<M>>();
  for (const mk of [...markets].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())) {
    if (!mk.branch) continue;
    const key = `${mk.metricId}|${mk.targetDate}`;
    let e = byKey.get(key);
    if (!e) {
      e = { metricId: mk.metricId, metricName: mk.metricName, targetDate: mk.targetDate, resolvesOn: mk.resolvesOn, expected: p.metricIds.includes(mk.metricId), approved: null, declined: null, impact: null };
      byKey.set(key, e);
    }
    e[mk.branch] = { market: mk, consensus: consensusOf(mk) };
  }
  const order = new Map(markets.map((mk, i) => [`${mk.metricId}|${mk.targetDate}`, i]));
  const rank = (e: ImpactEntry<M>) => {
    const i = p.metricIds.indexOf(e.metricId);
    return i < 0 ? p.metricIds.length : i;
  };
  const entries = [...byKey.values()].sort((a, b) => rank(a) - rank(b) || (order.get(`${a.metricId}|${a.targetDate}`) ?? 0) - (order.get(`${b.metricId}|${b.targetDate}`) ?? 0));
  for (const e of entries) {
    const a = e.approved?.consensus ?? null;
    const d = e.declined?.consensus ?? null;
    e.impact = a === null || d === null ? null : a - d;
  }
  return entries;
}

/** The headline impact: the proposal's headline metric at its headline date. */
export function headlineImpact<M>(p: ImpactBasis, impact: ImpactEntry<M>[]): number | null {
  return impact.find((e) => e.metricId === p.headlineMetricId && e.targetDate === p.headlineTargetDate)?.impact ?? null;
}
