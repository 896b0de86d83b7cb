import type { Deps } from '../../deps';
import { HORIZONS, SCORE_UNIT, type Horizon } from '../../domain/calibration';
import { SCORECARD_TOLERANCE, scorecardSummaries } from '../proposals';

/**
 * GET /marketplace/stats: per public workspace and overall — traded volume (nano), open books,
 * participants (members), proposals decided (approved or declined). Reads the book rows' running
 * volume and counts, never the trades.
 */
export async function marketplaceStats(deps: Deps) {
  const rows: Array<{ id: string; slug: string; name: string; volume: string; open_books: number; participants: number; decided: number }> = await deps.ds.query(
    `SELECT w.id, w.slug, w.name,
            coalesce((SELECT sum(mk.volume) FROM markets mk WHERE mk.workspace_id = w.id), 0)::text AS volume,
            (SELECT count(*) FROM markets mk WHERE mk.workspace_id = w.id AND mk.status IN ('open','closed'))::int AS open_books,
            (SELECT count(*) FROM memberships mb WHERE mb.workspace_id = w.id)::int AS participants,
            (SELECT count(*) FROM proposals p WHERE p.workspace_id = w.id AND p.status IN ('approved','declined'))::int AS decided
       FROM workspaces w WHERE w.public ORDER BY w.name, w.id`,
  );
  const [{ n }] = await deps.ds.query(`SELECT count(DISTINCT mb.agent_id)::int AS n FROM memberships mb JOIN workspaces w ON w.id = mb.workspace_id AND w.public`);
  const workspaces = rows.map((r) => ({ id: r.id, slug: r.slug, name: r.name, volume: BigInt(r.volume), openBooks: r.open_books, participants: r.participants, proposalsDecided: r.decided }));
  return {
    overall: {
      workspaces: workspaces.length,
      volume: workspaces.reduce((s, w) => s + w.volume, 0n),
      openBooks: workspaces.reduce((s, w) => s + w.openBooks, 0),
      participants: n as number,
      proposalsDecided: workspaces.reduce((s, w) => s + w.proposalsDecided, 0),
    },
    workspaces,
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
export async function benchmark(deps: Deps) {
  const ws: Array<{ id: string; slug: string; name: string }> = await deps.ds.query(`SELECT id, slug, name FROM workspaces WHERE public ORDER BY name, id`);
  const stats: Array<{ workspace_id: string; horizon: Horizon; books: number; abs_err: string }> = await deps.ds.query(
    `SELECT b.workspace_id, b.horizon, b.books, b.abs_err::text FROM benchmark_stats b JOIN workspaces w ON w.id = b.workspace_id AND w.public`,
  );
  const byHorizon = (rows: typeof stats): HorizonError[] =>
    HORIZONS.map((h) => {
      const hs = rows.filter((r) => r.horizon === h);
      const books = hs.reduce((n, r) => n + r.books, 0);
      const err = hs.reduce((s, r) => s + BigInt(r.abs_err), 0n);
      return { horizon: h, books, meanAbsError: books ? Math.round(Number(err) / books) / SCORE_UNIT : null };
    });
  const cards = await scorecardSummaries(deps.ds, ws.map((w) => w.id));
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
  const decided = workspaces.reduce((n, w) => n + w.scorecard.decided, 0);
  const within = workspaces.reduce((n, w) => n + w.scorecard.withinRange, 0);
  return { overall: { meanAbsErrorByHorizon: byHorizon(stats), scorecard: { decided, withinRange: within, hitRate: decided ? within / decided : null } }, workspaces };
}
