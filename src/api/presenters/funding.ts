import { toCredits } from '../../domain/money';
import type { DomainError } from '../../errors';
import type { BookCost, FundRecord, UnfundedBook } from '../../services/books';
import type { refreshNow } from '../../services/lifecycle';
import { presentMarket } from './market';

/** What opening books cost (issue 28); `dryRun` hides the ids of books that were rolled back. */
export function presentBookCost(b: BookCost, dryRun = false) {
  return {
    marketId: dryRun ? null : b.marketId,
    metricId: b.metricId,
    targetDate: b.targetDate,
    horizonEntry: b.horizonEntry,
    branch: b.branch,
    funded: b.funded,
    subsidy: toCredits(b.subsidy),
    planned: toCredits(b.planned),
    funderId: b.funderId,
  };
}

export function presentUnfundedBook(u: UnfundedBook, dryRun = false) {
  return { marketId: dryRun ? null : u.marketId, metricId: u.metricId, targetDate: u.targetDate, branch: u.branch, reason: u.reason, needed: toCredits(u.needed) };
}

/** The 201's cost fields, or with `quote` the dry run's answer. */
export function presentOpeningCost(
  o: { books: BookCost[]; spent: bigint; unfunded: UnfundedBook[] },
  quote?: { planned: bigint; payerId: string; balance: bigint; refusal?: DomainError | null },
) {
  const dryRun = quote !== undefined;
  const cost = {
    subsidySpent: toCredits(o.spent),
    books: o.books.map((b) => presentBookCost(b, dryRun)),
    // A dry run the real call would refuse opens nothing, so no book would stay unfunded: its refusal says why.
    unfundedBooks: quote?.refusal ? [] : o.unfunded.map((u) => presentUnfundedBook(u, dryRun)),
  };
  if (!quote) return cost;
  return {
    dryRun: true as const,
    ...cost,
    subsidyNeeded: toCredits(quote.planned),
    payerId: quote.payerId,
    balance: toCredits(quote.balance),
    balanceCovers: quote.balance >= quote.planned,
    refusal: quote.refusal ? quote.refusal.toBody() : null,
  };
}

/** POST /predictions/markets/{id}/fund. */
export function presentFunding(f: FundRecord, replay: boolean, now: Date) {
  return { ok: true as const, market: presentMarket(f.market, now), subsidy: toCredits(f.subsidy), balance: toCredits(f.balance), idempotentReplay: replay };
}

/** POST /predictions/markets/refresh: the horizon pass, then what the owner funded and what stays unfunded. */
export function presentRefresh(summary: NonNullable<Awaited<ReturnType<typeof refreshNow>>>) {
  const { funded, unfunded, ...pass } = summary;
  return {
    ok: true as const,
    ...pass,
    funded: funded.map((f) => ({ ...f, subsidy: toCredits(f.subsidy) })),
    unfunded: unfunded.map((u) => presentUnfundedBook(u)),
    fundedCount: funded.length,
  };
}
