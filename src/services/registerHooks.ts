import type { Deps } from '../deps';
import { marketHooks } from './hooks';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../errors';
import { voidMarketById } from './settlement';
import { spawnBooksForMetric } from './spawning';

/** Wire the markets area into the seams other areas call; run once per process at boot. */
export function registerMarketHooks(deps: Deps): void {
  marketHooks.onMetricCreated = async (m, metric) => {
    await spawnBooksForMetric(m, metric.id, deps.clock.now());
  };
  marketHooks.guardFormulaChange = async (m, metric) => {
    await guardTraded(m, metric.id, 'Its formula cannot change while a market on it has trades.', false);
  };
  marketHooks.beforeMetricDelete = async (m, metric) => {
    await guardTraded(m, metric.id, 'It cannot be deleted while an open market on it has been traded.', true);
    // Untraded books are voided first so their pools go back to the funders.
    const live = await m.query(`SELECT id FROM markets WHERE metric_id = $1 AND status IN ('open','closed') ORDER BY id`, [metric.id]);
    for (const r of live) await voidMarketById(m, r.id, 'metric deleted', deps.clock.now());
  };
  marketHooks.refundWorkspace = async (m, workspaceId) => {
    const live = await m.query(`SELECT id FROM markets WHERE workspace_id = $1 AND status IN ('open','closed') ORDER BY id`, [workspaceId]);
    for (const r of live) await voidMarketById(m, r.id, 'workspace deleted', deps.clock.now());
  };
}

async function guardTraded(m: EntityManager, metricId: string, sentence: string, openOnly: boolean): Promise<void> {
  const rows = await m.query(
    `SELECT count(*)::int AS n FROM markets WHERE metric_id = $1 AND trade_count > 0 ${openOnly ? "AND status IN ('open','closed')" : ''}`,
    [metricId],
  );
  if (rows[0].n > 0) {
    throw new ApiError('conflict', `This metric has ${rows[0].n} traded market${rows[0].n === 1 ? '' : 's'}. ${sentence}`, { tradedMarkets: rows[0].n });
  }
}
