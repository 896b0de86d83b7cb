import type { Deps } from '../../deps';
import { marketHooks } from './hooks';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../../errors';
import { voidMarketById } from '../markets';
import { refreshMetric } from '../markets';
import { spawnBooksForMetric } from '../markets';
import { registerProposalHooks } from '../proposals';

/** Wire the markets area into the seams other areas call; run once per process at boot. */
export function registerMarketHooks(deps: Deps): void {
  registerProposalHooks(deps);
  marketHooks.onMetricCreated = async (m, metric) => {
    await spawnBooksForMetric(m, metric.id, deps.clock.now());
  };
  marketHooks.guardFormulaChange = async (m, metric) => {
    await guardTraded(m, metric.id, 'Its formula cannot change while a live market on it has trades.');
  };
  marketHooks.beforeMetricDelete = async (m, metric) => {
    await guardTraded(m, metric.id, 'It cannot be deleted while an open market on it has been traded.');
    // Untraded books are voided first so their pools go back to the funders.
    const live = await m.query(`SELECT id FROM markets WHERE metric_id = $1 AND status IN ('open','closed') ORDER BY id`, [metric.id]);
    for (const r of live) await voidMarketById(m, r.id, 'metric deleted', deps.clock.now());
  };
  marketHooks.guardBackfill = async (m, metric) => {
    const [r] = await m.query(`SELECT count(*)::int AS n FROM markets WHERE metric_id = $1 AND status = 'resolved'`, [metric.id]);
    if (r.n > 0) throw new ApiError('conflict', 'This metric has a resolved market: its history can no longer be backfilled.', { resolvedMarkets: r.n });
  };
  marketHooks.onMetricChanged = async (m, metric, changed) => {
    const now = deps.clock.now();
    // A new formula or range reprices untraded books: void them (pools back) and open afresh.
    if (changed.includes('formula') || changed.includes('marketRangeMax')) {
      const untraded = await m.query(
        `SELECT id FROM markets WHERE metric_id = $1 AND proposal_id IS NULL AND status IN ('open','closed') AND trade_count = 0 ORDER BY id`,
        [metric.id],
      );
      const reason = changed.includes('formula') ? 'formula changed' : 'range changed';
      for (const r of untraded) await voidMarketById(m, r.id, `${reason}: respawned`, now);
    }
    if (['formula', 'marketRangeMax', 'timePreference', 'opensAt', 'liquidityCredits'].some((f) => changed.includes(f))) {
      await refreshMetric(m, metric.id, now);
    }
  };
  marketHooks.refundWorkspace = async (m, workspaceId) => {
    const live = await m.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status IN ('open','closed') ORDER BY id`, [workspaceId]);
    for (const r of live) await voidMarketById(m, r.id, 'workspace deleted', deps.clock.now());
  };
}

/** 409 while a live book (open or closed) of the metric has trades. */
async function guardTraded(m: EntityManager, metricId: string, sentence: string): Promise<void> {
  const rows = await m.query(
    `SELECT count(*)::int AS n FROM markets WHERE metric_id = $1 AND trade_count > 0 AND status IN ('open','closed')`,
    [metricId],
  );
  if (rows[0].n > 0) {
    throw new ApiError('conflict', `This metric has ${rows[0].n} traded market${rows[0].n === 1 ? '' : 's'}. ${sentence}`, { tradedMarkets: rows[0].n });
  }
}
