import { rows } from '../../db/queryRows';
import type { Deps } from '../../deps';
import { Workspace } from '../../entities/workspace';
import { HORIZONS, SCORE_UNIT, type Horizon } from '../../domain/calibration';
import { badRequest } from '../../errors';
import { keptFor } from '../kept';
import { publicScorecardSummary, SCORECARD_TOLERANCE, scorecardSummaries } from '../proposals';
import { proposalShownSql, publiclyHiddenMetricIds } from '../access';

/** A page of public workspaces: at most `limit` after the cursor, in name order (then id). */
export interface PublicPage {
  limit: number;
  cursor?: string;
}

const encodeCursor = (w: { name: string; id: string }) => Buffer.from(JSON.stringify([w.name, w.id])).toString('base64url');

function decodeCursor(cursor: string | undefined): [string, string] | [null, null] {
  if (cursor === undefined) return [null, null];
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && /^[0-9a-f-]{36}$/.test(v[1])) return [v[0], v[1]];
  } catch {
    // fall through: refused below
  }
  throw badRequest('The query field "cursor" is refused: pass the nextCursor of a previous page unchanged.');
}

/**
 * One page of public workspaces in name order from the cursor on (the index workspaces_public_name),
 * with the next page's cursor: one more row than the page is read to know whether there is one.
 */
async function publicWorkspacePage(deps: Deps, page: PublicPage): Promise<{ ws: Array<{ id: string; slug: string; name: string }>; nextCursor: string | null }> {
  const [name, id] = decodeCursor(page.cursor);
  const found: Array<{ id: string; slug: string; name: string }> = await deps.ds.query(
    `SELECT id, slug, name FROM workspaces
      WHERE public AND ($2::text IS NULL OR (name, id) > ($2::text, $3::uuid))
      ORDER BY name, id LIMIT $1`,
    [page.limit + 1, name, id],
  );
  const ws = found.slice(0, page.limit);
  return { ws, nextCursor: found.length > page.limit ? encodeCursor(ws[ws.length - 1]) : null };
}

/**
 * GET /marketplace/stats: overall and per public workspace (a page of them) — traded volume (nano),
 * open books, participants (members), proposals decided (approved or declined). Reads the book rows'
 * running volume and counts, never the trades. The overall figures are one grouped statement over
 * every public workspace's books and proposals (a sum over book rows, not trades).
 */
export async function marketplaceStats(deps: Deps, page: PublicPage) {
  const [{ ws, nextCursor }, hidden] = await Promise.all([publicWorkspacePage(deps, page), publiclyHiddenMetricIds(deps)]);
  const ids = ws.map((w) => w.id);
  // The books of metrics the public may not read, and proposals hidden with them, count in no figure (issue 65).
  const bookShown = `NOT (mk.metric_id = ANY($2::uuid[]))`;
  const proposalShown = hidden.length ? proposalShownSql('p', '$2::uuid[]') : 'true';
  const figureRows: Array<{ id: string; volume: string; open_books: number; participants: number; decided: number }> = await deps.ds.query(
    `SELECT w.id,
            coalesce((SELECT sum(mk.volume) FROM markets mk WHERE mk.workspace_id = w.id AND ${bookShown}), 0)::text AS volume,
            (SELECT count(*) FROM markets mk WHERE mk.workspace_id = w.id AND mk.status IN ('open','closed') AND ${bookShown})::int AS open_books,
            (SELECT count(*) FROM memberships mb WHERE mb.workspace_id = w.id)::int AS participants,
            (SELECT count(*) FROM proposals p WHERE p.workspace_id = w.id AND p.status IN ('approved','declined') AND ${proposalShown})::int AS decided
       FROM unnest($1::uuid[]) AS w(id)`,
    [ids, hidden],
  );
  const figures = new Map(figureRows.map((r) => [r.id, r]));
  const totals = await keptFor(deps, `standings:marketplace:${hidden.join(',')}`, async () => {
    const [overall]: Array<{ workspaces: number; volume: string; open_books: number; participants: number; decided: number }> = await deps.ds.query(
    `SELECT (SELECT count(*) FROM workspaces WHERE public)::int AS workspaces,
            coalesce((SELECT sum(mk.volume) FROM markets mk JOIN workspaces w ON w.id = mk.workspace_id AND w.public WHERE ${bookShown.replace('$2', '$1')}), 0)::text AS volume,
            (SELECT count(*) FROM markets mk JOIN workspaces w ON w.id = mk.workspace_id AND w.public WHERE mk.status IN ('open','closed') AND ${bookShown.replace('$2', '$1')})::int AS open_books,
            (SELECT count(DISTINCT mb.agent_id) FROM memberships mb JOIN workspaces w ON w.id = mb.workspace_id AND w.public)::int AS participants,
            (SELECT count(*) FROM proposals p JOIN workspaces w ON w.id = p.workspace_id AND w.public WHERE p.status IN ('approved','declined') AND ${hidden.length ? proposalShownSql('p', '$1::uuid[]') : 'true'})::int AS decided`,
      [hidden],
    );
    return overall;
  });
  const overall = totals.value;
  const workspaces = ws.map((w) => {
    const f = figures.get(w.id)!;
    return { id: w.id, slug: w.slug, name: w.name, volume: BigInt(f.volume), openBooks: f.open_books, participants: f.participants, proposalsDecided: f.decided };
  });
  return {
    overall: { workspaces: overall.workspaces, volume: BigInt(overall.volume), openBooks: overall.open_books, participants: overall.participants, proposalsDecided: overall.decided, asOf: totals.asOf },
    workspaces,
    nextCursor,
  };
}

export interface HorizonError {
  horizon: Horizon;
  books: number;
  meanAbsError: number | null;
}

/**
 * GET /benchmark: per public workspace, how the final consensus of resolved books compared with the
 * realised value — the mean absolute error normalised by range, by horizon length (benchmark_stats,
 * written when each book resolved) — and the decision scorecard's hit rate (the branch taken within
 * tolerance of the realised value, proposals' scorecard).
 */
export async function benchmark(deps: Deps, page: PublicPage) {
  const [{ ws, nextCursor }, hidden] = await Promise.all([publicWorkspacePage(deps, page), publiclyHiddenMetricIds(deps)]);
  const ids = ws.map((w) => w.id);
  // The forecast errors are summed per workspace, not per metric: a workspace whose Public group hides
  // a metric has its errors withheld (no books shown), and the overall leaves them out (issue 65).
  const withheld: string[] = hidden.length ? (await rows<{ workspace_id: string }>(deps.ds, `SELECT DISTINCT workspace_id FROM metrics WHERE id = ANY($1::uuid[])`, [hidden])).map((r) => r.workspace_id) : [];
  const stats: Array<{ workspace_id: string; horizon: Horizon; books: number; abs_err: string }> = await deps.ds.query(
    `SELECT b.workspace_id, b.horizon, b.books, b.abs_err::text FROM benchmark_stats b WHERE b.workspace_id = ANY($1::uuid[]) AND NOT (b.workspace_id = ANY($2::uuid[]))`,
    [ids, withheld],
  );
  // Overall: every public workspace's sums, grouped in the database (one row per horizon, one per decision outcome).
  const totals = await keptFor(deps, `standings:benchmark:${hidden.join(',')}`, async () => {
    const byHorizonRows: Array<{ horizon: Horizon; books: number; abs_err: string }> = await deps.ds.query(
      `SELECT b.horizon, sum(b.books)::int AS books, sum(b.abs_err)::text AS abs_err FROM benchmark_stats b JOIN workspaces w ON w.id = b.workspace_id AND w.public
        WHERE NOT (b.workspace_id = ANY($1::uuid[])) GROUP BY b.horizon`,
      [withheld],
    );
    return { byHorizonRows, card: await publicScorecardSummary(deps.ds, hidden) };
  });
  const overallStats = totals.value.byHorizonRows;
  const overallCard = totals.value.card;
  const byHorizon = (sums: Array<{ horizon: Horizon; books: number; abs_err: string }>): HorizonError[] =>
    HORIZONS.map((h) => {
      const hs = sums.filter((r) => r.horizon === h);
      const books = hs.reduce((n, r) => n + r.books, 0);
      const err = hs.reduce((s, r) => s + BigInt(r.abs_err), 0n);
      return { horizon: h, books, meanAbsError: books ? Math.round(Number(err) / books) / SCORE_UNIT : null };
    });
  const cards = await scorecardSummaries(deps.ds, ids, hidden);
  const statsOf = new Map<string, typeof stats>(ws.map((w) => [w.id, []]));
  for (const s of stats) statsOf.get(s.workspace_id)?.push(s);
  const workspaces = ws.map((w) => {
    const card = cards.get(w.id)!;
    return {
      id: w.id,
      slug: w.slug,
      name: w.name,
      meanAbsErrorByHorizon: byHorizon(statsOf.get(w.id)!),
      scorecard: { decided: card.predicted, withinRange: card.withinRange, hitRate: card.withinRangeRate, tolerance: SCORECARD_TOLERANCE },
    };
  });
  const { predicted: decided, withinRange: within } = overallCard;
  return { overall: { meanAbsErrorByHorizon: byHorizon(overallStats), scorecard: { decided, withinRange: within, hitRate: decided ? within / decided : null }, asOf: totals.asOf }, workspaces, nextCursor };
}

/** How active a public workspace is: what the home page and the listing sort by. Volume in nano. */
export interface WorkspaceActivity {
  metrics: number;
  openProposals: number;
  openBooks: number;
  volume: bigint;
  lastTradeAt: Date | null;
}

/** The most a listing answers (the home page shows the first ones). */
const PUBLIC_LISTED = 500;

/**
 * Public workspaces, most active first (traded volume, then open proposals, then metrics, then the
 * oldest), with those figures; `q` keeps the ones whose name or slug contains it (case-insensitive).
 */
export async function publicWorkspaces(deps: Deps, opts: { q?: string } = {}): Promise<Array<{ workspace: Workspace; activity: WorkspaceActivity }>> {
  const q = opts.q?.trim().toLowerCase();
  const hidden = await publiclyHiddenMetricIds(deps);
  // The ranking of every public workspace sums each one's books (1.3 s at 10,000 workspaces in
  // bench/scale): kept per process like the platform's other figures (services/kept.ts), and a
  // search filters the kept ranking in memory (a live search that matched 1,111 workspaces took
  // 105 ms at p50), so both answer in the same order and may be as old as the ranking.
  const kept = await keptFor(deps, `workspaces:public-ranking:${hidden.join(',')}`, () => rankPublicWorkspaces(deps, hidden));
  const ranked = await withNewerPublic(deps, hidden, kept.value, kept.asOf);
  const found = q ? ranked.filter((r) => r.workspace.name.toLowerCase().includes(q) || r.workspace.slug.toLowerCase().includes(q)) : ranked;
  return found.slice(0, PUBLIC_LISTED);
}

/** How far before a kept ranking's start a workspace may have been created and still be missing from it (its transaction committed later). */
const RANKING_OVERLAP_MS = 60_000;

/**
 * The kept ranking with the public workspaces created since it was computed, ranked among
 * themselves at its end (young, with little activity yet): a new public workspace is listed on the
 * next home page, in every process, not one TTL later.
 */
async function withNewerPublic(
  deps: Deps,
  hidden: readonly string[],
  ranked: Array<{ workspace: Workspace; activity: WorkspaceActivity }>,
  asOf: Date,
): Promise<Array<{ workspace: Workspace; activity: WorkspaceActivity }>> {
  const newer: Array<{ id: string }> = await deps.ds.query(`SELECT id FROM workspaces WHERE public AND deleting_at IS NULL AND created_at > $1`, [new Date(asOf.getTime() - RANKING_OVERLAP_MS)]);
  const listed = new Set(ranked.map((r) => r.workspace.id));
  const missing = newer.map((r) => r.id).filter((id) => !listed.has(id));
  return missing.length ? [...ranked, ...(await rankPublicWorkspaces(deps, hidden, missing))] : ranked;
}

async function rankPublicWorkspaces(deps: Deps, hidden: readonly string[], only?: readonly string[]): Promise<Array<{ workspace: Workspace; activity: WorkspaceActivity }>> {
  // Only what a public reader sees counts: a metric the one read policy hides from the public, its
  // books, and a proposal hidden with it, are left out of every figure (hidden means hidden).
  const shown = (metricId: string) => `NOT (${metricId} = ANY(CAST(:hidden AS uuid[])))`;
  const qb = deps.ds
    .getRepository(Workspace)
    .createQueryBuilder('w')
    .addSelect(`(SELECT count(*) FROM metrics m WHERE m.workspace_id = w.id AND ${shown('m.id')})`, 'a_metrics')
    .addSelect(`(SELECT count(*) FROM proposals p WHERE p.workspace_id = w.id AND p.status = 'pending'${hidden.length ? ` AND ${proposalShownSql('p', 'CAST(:hidden AS uuid[])')}` : ''})`, 'a_open_proposals')
    .addSelect(`(SELECT count(*) FROM markets k WHERE k.workspace_id = w.id AND k.status = 'open' AND ${shown('k.metric_id')})`, 'a_open_books')
    .addSelect(`(SELECT coalesce(sum(k.volume), 0) FROM markets k WHERE k.workspace_id = w.id AND ${shown('k.metric_id')})`, 'a_volume')
    .addSelect(`(SELECT max(k.last_trade_at) FROM markets k WHERE k.workspace_id = w.id AND ${shown('k.metric_id')})`, 'a_last_trade')
    .where('w.public = true AND w.deleting_at IS NULL')
    .setParameter('hidden', hidden);
  if (only) qb.andWhere('w.id IN (:...only)', { only });
  qb.orderBy('a_volume', 'DESC').addOrderBy('a_open_proposals', 'DESC').addOrderBy('a_metrics', 'DESC').addOrderBy('w.created_at', 'ASC');
  const { entities, raw } = await qb.getRawAndEntities();
  return entities.map((workspace, i) => {
    const r = raw[i] as { a_metrics: string; a_open_proposals: string; a_open_books: string; a_volume: string; a_last_trade: Date | null };
    return {
      workspace,
      activity: { metrics: Number(r.a_metrics), openProposals: Number(r.a_open_proposals), openBooks: Number(r.a_open_books), volume: BigInt(r.a_volume), lastTradeAt: r.a_last_trade },
    };
  });
}
