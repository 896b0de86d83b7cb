import { z } from 'zod';
import { policies } from '../../services/access';
import {
  benchmark,
  createSeason,
  marketplaceStats,
  DEFAULT_MIN_RESOLVED,
  LEADERBOARD_SORTS,
  publicProfile,
  seasonStandings,
  listSeasons,
  standingsOf,
  updateSeason,
} from '../../services/standings';
import { presentLeaderboard, presentMarketplaceStats, presentPublicProfile, presentSeason, presentSeasonStandings } from '../presenters/standings';
import { defineRoute } from '../registry';
import { idParam, limitQuery } from '../schemas/common';
import { benchmarkSchema, leaderboardSchema, marketplaceStatsSchema, publicPageQuery, publicProfileSchema, seasonSchema, seasonWithStandingsSchema } from '../schemas/standings';

export const getAgentsByIdPublic = defineRoute({
  method: 'GET',
  path: '/agents/:id/public',
  auth: policies.standings.readPublic,
  summary:
    'Public profile of a participant (spec §2.7), matched by id, then case-insensitively by nickname. stats and activeWorkspaces cover public workspaces only; openPositions and recentTrades widen to workspaces where the caller has read (all for the master key); walletAddress and notifications only for yourself, an owned bot, or the master key. Definitions: the seasons guide.',
  params: idParam,
  response: publicProfileSchema,
  errors: ['not_found'],
  handler: async (c) => presentPublicProfile(await publicProfile(c.deps, c.caller, c.params.id)),
});

const standingsQuery = {
  sort: z.enum(LEADERBOARD_SORTS, { error: `must be one of ${LEADERBOARD_SORTS.join(', ')}` }).default('earnings'),
  minResolvedMarkets: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0).max(1_000_000).default(DEFAULT_MIN_RESOLVED),
  limit: limitQuery(50, 200),
  offset: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0).max(1_000_000).default(0),
  workspaceId: z.string().min(1).max(200).optional(),
  metricId: z.uuid({ error: 'must be a metric id' }).optional(),
};

export const getLeaderboard = defineRoute({
  method: 'GET',
  path: '/leaderboard',
  auth: policies.standings.readLeaderboard,
  summary:
    'Standings over public workspaces from the per-participant aggregates: sort=earnings (settled, default)|calibration|accuracy|volume, seasonId, workspaceId (id or slug of a public workspace), metricId, minResolvedMarkets (default 1), limit (default 50, max 200), offset. Ties share a rank and are listed by nickname.',
  query: z.object({ ...standingsQuery, seasonId: z.string().min(1).max(200).optional() }),
  response: leaderboardSchema,
  errors: ['not_found', 'workspace_not_found'],
  handler: async (c) => presentLeaderboard(await standingsOf(c.deps, c.query)),
});

export const getSeasons = defineRoute({
  method: 'GET',
  path: '/seasons',
  auth: policies.standings.readSeasons,
  summary: 'Seasons, newest first: { id, name, startsAt, endsAt, status (upcoming|active|ended) }.',
  response: z.array(seasonSchema),
  errors: [],
  handler: async (c) => (await listSeasons(c.deps)).map(presentSeason),
});

export const getSeasonsById = defineRoute({
  method: 'GET',
  path: '/seasons/:id',
  auth: policies.standings.readSeason,
  summary:
    'A season with its standings: books resolved within [startsAt, endsAt), frozen once it has ended. Query as GET /leaderboard (sort, workspaceId, metricId, minResolvedMarkets, limit, offset).',
  params: idParam,
  query: z.object(standingsQuery),
  response: seasonWithStandingsSchema,
  errors: ['not_found', 'workspace_not_found'],
  handler: async (c) => presentSeasonStandings(await seasonStandings(c.deps, c.params.id, c.query)),
});

const seasonBody = {
  name: z.string().trim().min(1, 'must not be empty').max(100),
  startsAt: z.coerce.date({ error: 'must be a date-time' }),
  endsAt: z.coerce.date({ error: 'must be a date-time' }),
};

export const postSeasons = defineRoute({
  method: 'POST',
  path: '/seasons',
  auth: policies.standings.createSeason,
  summary: 'Create a season { name, startsAt, endsAt } (platform operator). Its standings count books resolved within [startsAt, endsAt), including those already resolved.',
  body: z.strictObject(seasonBody),
  response: seasonSchema,
  successStatus: 201,
  errors: [],
  handler: async (c) => {
    c.status(201);
    return presentSeason(await createSeason(c.deps, c.body));
  },
});

export const putSeasonsById = defineRoute({
  method: 'PUT',
  path: '/seasons/:id',
  auth: policies.standings.setSeason,
  summary: 'Edit a season { name?, startsAt?, endsAt? } (platform operator); a new period recounts its standings.',
  params: idParam,
  body: z.strictObject({ name: seasonBody.name.optional(), startsAt: seasonBody.startsAt.optional(), endsAt: seasonBody.endsAt.optional() }),
  response: seasonSchema,
  errors: ['not_found'],
  handler: async (c) => presentSeason(await updateSeason(c.deps, c.params.id, c.body)),
});

export const getMarketplaceStats = defineRoute({
  method: 'GET',
  path: '/marketplace/stats',
  auth: policies.standings.readMarketplaceStats,
  summary: 'Overall and per public workspace (a page, name order): traded volume (credits), open books, participants (members), proposals decided.',
  query: publicPageQuery,
  response: marketplaceStatsSchema,
  errors: [],
  handler: async (c) => presentMarketplaceStats(await marketplaceStats(c.deps, c.query)),
});

export const getBenchmark = defineRoute({
  method: 'GET',
  path: '/benchmark',
  auth: policies.standings.readBenchmark,
  summary:
    "How consensus compared with realised values, per public workspace and overall: the mean absolute error of resolved books' final consensus, normalised by range, by horizon length (day, week, month, year, longer: how long the book traded), and the decision scorecard's hit rate (the branch taken within tolerance). Workspaces a page at a time (limit, cursor); overall covers all.",
  query: publicPageQuery,
  response: benchmarkSchema,
  errors: [],
  handler: async (c) => {
    const b = await benchmark(c.deps, c.query);
    return { ...b, overall: { ...b.overall, asOf: b.overall.asOf.toISOString() } };
  },
});
