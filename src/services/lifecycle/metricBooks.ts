import type { EntityManager } from 'typeorm';
import { conflict } from '../../errors';
import { listMarkets, type MarketRow } from '../books';
import { refreshMetric } from './refreshHorizons';
import { voidBooksById } from './resolveBook';
import { spawnBooksForMetric } from './spawnBooks';
import { rows } from '../../db/queryRows';

/**
 * What a metric's life does to its books, called by the metrics and workspaces areas inside their
 * own transactions (markets never imports them back, so these are plain imports).
 */

/** A new metric opens its books: what they cost the owner, and which stayed unfunded and why. */
export async function openBooksForNewMetric(m: EntityManager, metricId: string, now: Date): ReturnType<typeof spawnBooksForMetric> {
  return spawnBooksForMetric(m, metricId, now);
}

/** 409 while a live book (open or closed) of the metric has trades. */
export async function refuseIfTraded(m: EntityManager, metricId: string, sentence: string): Promise<void> {
  const [{ n }] = await rows<{ n: number }>(
    m,
    `SELECT count(*)::int AS n FROM markets WHERE metric_id = $1 AND trade_count > 0 AND status IN ('open','closed')`,
    [metricId],
  );
  if (n > 0) {
    throw conflict(`This metric has ${n} traded market${n === 1 ? '' : 's'}. ${sentence}`, { tradedMarkets: n });
  }
}

/** Before a metric is deleted: refused while a live book on it is traded; otherwise its books are voided (pools back to funders). */
export async function retireBooksOfDeletedMetric(m: EntityManager, metricId: string, now: Date): Promise<void> {
  await refuseIfTraded(m, metricId, 'It cannot be deleted while an open market on it has been traded.');
  const live: Array<{ id: string }> = await m.query(`SELECT id FROM markets WHERE metric_id = $1 AND status IN ('open','closed') ORDER BY id`, [metricId]);
  await voidBooksById(m, live.map((r) => r.id), 'metric deleted', now);
}

/** A backfill is refused once a book on the metric has resolved (its history is settled). */
export async function refuseBackfillAfterResolution(m: EntityManager, metricId: string): Promise<void> {
  const [r] = await rows<{ n: number }>(m, `SELECT count(*)::int AS n FROM markets WHERE metric_id = $1 AND status = 'resolved'`, [metricId]);
  if (r.n > 0) throw conflict('This metric has a resolved market: its history can no longer be backfilled.', { resolvedMarkets: r.n });
}

/**
 * A metric's settings changed: a new formula or range reprices untraded books (void them, pools
 * back, and open afresh); any setting that decides which books exist runs its horizon pass.
 */
export async function respawnBooksAfterChange(m: EntityManager, metricId: string, changed: string[], now: Date): Promise<void> {
  if (changed.includes('formula') || changed.includes('marketRangeMax')) {
    const untraded: Array<{ id: string }> = await m.query(
      `SELECT id FROM markets WHERE metric_id = $1 AND proposal_id IS NULL AND status IN ('open','closed') AND trade_count = 0 ORDER BY id`,
      [metricId],
    );
    const reason = changed.includes('formula') ? 'formula changed' : 'range changed';
    await voidBooksById(m, untraded.map((r) => r.id), `${reason}: respawned`, now);
  }
  if (['formula', 'marketRangeMax', 'timePreference', 'opensAt', 'liquidityCredits'].some((f) => changed.includes(f))) {
    await refreshMetric(m, metricId, now);
  }
}

/** Open baseline books per metric (GET /status?markets=1). */
export async function openBaselineBooksByMetric(m: EntityManager, workspaceId: string, metricIds: string[]): Promise<Map<string, MarketRow[]>> {
  const out = new Map<string, MarketRow[]>();
  for (const mk of await listMarkets(m, workspaceId, { limit: 5000, baselineOnly: true, statuses: ['open'] })) {
    if (!metricIds.includes(mk.metricId)) continue;
    out.set(mk.metricId, [...(out.get(mk.metricId) ?? []), mk]);
  }
  return out;
}
