import type { EntityManager } from 'typeorm';

/**
 * Seams between areas that must not import each other in a cycle: metrics call into markets
 * (open books, guard formula changes), access control calls into markets (refund on delete).
 * The markets area registers these at import time; each runs inside the caller's transaction.
 */
export interface MetricRef {
  id: string;
  workspaceId: string;
  name: string;
}

export const marketHooks: {
  /** A metric was created: open its books. */
  onMetricCreated?: (m: EntityManager, metric: MetricRef) => Promise<void>;
  /** A metric's settings changed (range, formula, opensAt, liquidity, timePreference). */
  onMetricChanged?: (m: EntityManager, metric: MetricRef, changed: string[]) => Promise<void>;
  /** Throw a 409 ApiError when a formula change must be refused (a book on the metric has trades). */
  guardFormulaChange?: (m: EntityManager, metric: MetricRef) => Promise<void>;
  /** Throw a 409 ApiError when deletion must be refused (an open book on it has been traded); else void its books. */
  beforeMetricDelete?: (m: EntityManager, metric: MetricRef) => Promise<void>;
  /** Throw a 409 ApiError when a backfill must be refused (the metric has a resolved book). */
  guardBackfill?: (m: EntityManager, metric: MetricRef) => Promise<void>;
  /** Refund and void every open book of a workspace (workspace deletion). */
  refundWorkspace?: (m: EntityManager, workspaceId: string) => Promise<void>;
  /** Open baseline books per metric for GET /status?markets=1. */
  statusMarkets?: (m: EntityManager, workspaceId: string, metricIds: string[]) => Promise<Map<string, unknown[]>>;
} = {};
