/** Listing a workspace's proposals: a page newest first or by |headline impact|, with the number matching. */
import type { DataSource } from 'typeorm';
import { rows } from '../../db/queryRows';
import type { ImpactBasis } from '../../domain/proposalImpact';
import { rowToMarket, type MarketRaw, type MarketRow } from '../books';
import { proposalsByIds, type ProposalStatus } from './proposalRows';
import { proposalShownSql } from '../access';
import { headlineImpact, proposalImpact, proposalViews, type ProposalView } from './proposalViews';

export interface ListProposalsQuery {
  status?: ProposalStatus;
  /** The metrics the reader may not read (unreadableMetricIds): a proposal hidden with them is left out of the page and the total. */
  hiddenMetricIds?: string[] | null;
  sort: 'created' | 'impact';
  limit: number;
  offset: number;
}

/** A proposal with its headline book (a MARKET_SELECT-like row; `id` null when the book is not spawned). */
type HeadlineRaw = MarketRaw & { pid: string; p_seq: string; p_metric_ids: string[] | null; p_hm: string | null; p_hd: string | null; id: string | null };

/**
 * A page of proposals, newest first or by |headline impact| (nulls last), with the total matching.
 * The page's ids are chosen in SQL (the impact sort ranks every matching proposal from one join
 * with its headline books); the page's rows are then loaded through the entity.
 */
export async function listProposals(ds: DataSource, workspaceId: string, q: ListProposalsQuery): Promise<{ items: ProposalView[]; total: number }> {
  const args: unknown[] = [workspaceId, q.status ?? null];
  let where = `p.workspace_id = $1 AND ($2::text IS NULL OR p.status = $2)`;
  if (q.hiddenMetricIds?.length) {
    args.push(q.hiddenMetricIds);
    where += ` AND ${proposalShownSql('p', `$${args.length}::uuid[]`)}`;
  }
  const [{ n }] = await rows<{ n: number }>(ds, `SELECT count(*)::int AS n FROM proposals p WHERE ${where}`, args);
  let pageIds: string[];
  if (q.sort === 'impact') {
    // Only the headline pair of every matching proposal is loaded to rank them.
    const headlines = await rows<HeadlineRaw>(
      ds,
      `SELECT p.id AS pid, p.seq AS p_seq, p.metric_ids AS p_metric_ids, p.headline_metric_id AS p_hm, p.headline_target_date AS p_hd, mk.*, mt.name AS metric_name
         FROM proposals p
         LEFT JOIN markets mk ON mk.proposal_id = p.id AND mk.metric_id = p.headline_metric_id AND mk.target_date = p.headline_target_date
         LEFT JOIN metrics mt ON mt.id = mk.metric_id
        WHERE ${where}`,
      args,
    );
    const ranked = new Map<string, { seq: bigint; markets: MarketRow[]; p: ImpactBasis }>();
    for (const r of headlines) {
      let e = ranked.get(r.pid);
      if (!e) {
        e = { seq: BigInt(r.p_seq), markets: [], p: { metricIds: r.p_metric_ids ?? [], headlineMetricId: r.p_hm, headlineTargetDate: r.p_hd } };
        ranked.set(r.pid, e);
      }
      if (r.id) e.markets.push(rowToMarket(r));
    }
    const scored = [...ranked.entries()].map(([id, e]) => ({ id, seq: e.seq, impact: headlineImpact(e.p, proposalImpact(e.p, e.markets)) }));
    scored.sort((a, b) => {
      if (a.impact === null || b.impact === null) {
        if (a.impact !== b.impact) return a.impact === null ? 1 : -1;
      } else if (Math.abs(b.impact) !== Math.abs(a.impact)) return Math.abs(b.impact) - Math.abs(a.impact);
      return b.seq > a.seq ? 1 : b.seq < a.seq ? -1 : 0;
    });
    pageIds = scored.slice(q.offset, q.offset + q.limit).map((s) => s.id);
  } else {
    const page = await rows<{ id: string }>(ds, `SELECT p.id FROM proposals p WHERE ${where} ORDER BY p.created_at DESC, p.seq DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`, [...args, q.limit, q.offset]);
    pageIds = page.map((r) => r.id);
  }
  if (!pageIds.length) return { items: [], total: n };
  return { items: await proposalViews(ds, await proposalsByIds(ds, pageIds)), total: n };
}
