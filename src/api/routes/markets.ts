import { z } from 'zod';
import { DomainError } from '../../errors';
import { parseTargetDate, HorizonError } from '../../domain/horizons';
import { toNano } from '../../domain/money';
import { tradeSpecOf } from '../../domain/trading';
import { fundMarket, marketByTargetDate, marketHistory, marketInWorkspace, marketsOfWorkspace, requireMarket, type MarketRow } from '../../services/books';
import { bodyHash, dryRunTrade, submitTrade } from '../../services/trading';
import { openManualMarket, voidMarketByHand } from '../../services/lifecycle';
import { idempotencyKey } from '../idempotency';
import { presentMarket, presentVoid } from '../presenters/market';
import { presentTradeOutcome, presentTradeQuote } from '../presenters/trade';
import { presentFunding } from '../presenters/funding';
import { fundResultSchema } from '../schemas/funding';
import { marketHistorySchema, marketSchema, tradeResultSchema, voidResultSchema } from '../schemas/markets';
import { warnings } from '../schemas/output';
import { defineRoute, type Call } from '../registry';
import { credits, limitQuery, positiveCredits, positiveShares } from '../schemas/common';
import { openTargetDates } from '../../services/metrics';
import { readableRows, policies } from '../../services/access';

const direction = z.enum(['higher', 'lower'], { error: "must be 'higher' or 'lower'" });
const finite = z.number({ error: 'must be a number' });
const STORED_STATUSES = ['open', 'closed', 'resolved', 'voided'] as const;
/** ?status=resolved,voided: the stored statuses to list (each named once at most). */
const marketStatusQuery = z
  .string()
  .max(100)
  .transform((text, ctx) => {
    const names = [...new Set(text.split(',').map((n) => n.trim().toLowerCase()))];
    const wrong = names.filter((n) => !(STORED_STATUSES as readonly string[]).includes(n));
    if (wrong.length) ctx.addIssue({ code: 'custom', message: `must list some of ${STORED_STATUSES.join(', ')}, separated by commas` });
    return names as (typeof STORED_STATUSES)[number][];
  })
  .optional();
const marketIdParam = z.object({ id: z.string().uuid('must be a market id (UUID)') });

export const getPredictionsMarkets = defineRoute({
  method: 'GET',
  path: '/predictions/markets',
  response: z.array(marketSchema),
  errors: [],
  auth: policies.markets.list,
  summary:
    'Markets, open ones by default. Query metricId, proposalId, status (a comma-separated list of open, closed, resolved, voided; default open,closed; resolved and voided books are listed newest resolution first), limit (1 to 200, default 50).',
  query: z.object({ metricId: z.string().max(100).optional(), proposalId: z.string().max(100).optional(), status: marketStatusQuery, limit: limitQuery(50, 200) }),
  handler: async (c) => {
    const access = c.workspace();
    const { status, ...filter } = c.query;
    const rows = await marketsOfWorkspace(c.deps, access.workspace.id, { ...filter, statuses: status });
    const now = c.deps.clock.now();
    return (await readableRows(c.deps, access.policy, rows)).map((mk) => presentMarket(mk, now));
  },
});

export const getPredictionsMarketsById = defineRoute({
  method: 'GET',
  path: '/predictions/markets/:id',
  response: marketSchema,
  errors: ['market_not_found'],
  auth: policies.markets.read,
  summary: 'One market with shares, prediction and probability.',
  params: marketIdParam,
  handler: async (c) => presentMarket(await readableMarket(c, c.params.id), c.deps.clock.now()),
});

export const getPredictionsMarketsByIdHistory = defineRoute({
  method: 'GET',
  path: '/predictions/markets/:id/history',
  response: marketHistorySchema,
  errors: ['market_not_found'],
  auth: policies.markets.readHistory,
  summary: 'Consensus and probability after each trade, oldest first. Query limit (default 500, max 5000).',
  params: marketIdParam,
  query: z.object({ limit: limitQuery(500, 5000) }),
  handler: async (c) => {
    const mk = await readableMarket(c, c.params.id);
    const points = await marketHistory(c.deps, mk.id, c.query.limit);
    return {
      marketId: mk.id,
      opened: { probability: mk.openedProbability, consensus: mk.openedProbability === null ? null : mk.rangeMin + mk.openedProbability * (mk.rangeMax - mk.rangeMin), at: mk.createdAt.toISOString() },
      points: points.map((p) => ({ ...p, at: p.at.toISOString() })),
    };
  },
});

/** A market the caller may see: a metric hidden by group permissions hides its books too, and a proposal hidden with its metrics its branches. */
export async function readableMarket(c: Call<unknown, unknown, unknown>, id: string): Promise<MarketRow> {
  const access = c.workspace();
  const mk = await marketInWorkspace(c.deps, access.workspace.id, id);
  if (!mk || !(await readableRows(c.deps, access.policy, [mk])).length) throw new DomainError('market_not_found', `Market "${id}" was not found in this workspace.`);
  return mk;
}

const tradeBody = z.object({
  marketId: z.string().uuid('must be a market id (UUID)').optional(),
  metricId: z.string().max(100).optional(),
  metricName: z.string().max(200).optional(),
  targetDate: z.string().max(40).optional(),
  proposalId: z.string().uuid('must be a proposal id (UUID)').optional(),
  branch: z.enum(['approved', 'declined'], { error: "must be 'approved' or 'declined'" }).optional(),
  direction: direction.optional(),
  amount: positiveCredits.optional(),
  targetValue: finite.optional(),
  value: finite.optional().meta({ deprecated: true, description: "Superseded by 'targetValue'." }),
  maxBudget: positiveCredits.optional(),
  sellShares: positiveShares.optional(),
  limit: finite.optional(),
  dryRun: z.boolean({ error: 'must be true or false' }).optional(),
});
/** The body fields that name a market (POST /predictions/orders names its market the same way). */
export const marketRef = tradeBody.pick({ marketId: true, metricId: true, metricName: true, targetDate: true, proposalId: true, branch: true });

/** " The open books of X are for: a, b." (or that there are none): the way out of a refused market reference. */
async function existingDates(c: Call<z.infer<typeof marketRef>, unknown, unknown>, workspaceId: string, branch: string | null): Promise<string> {
  const b = c.body;
  const metric = b.metricName ?? b.metricId;
  const where = b.proposalId ? ` on the ${branch} branch of proposal ${b.proposalId}` : '';
  const dates = (await openTargetDates(c.deps, { workspaceId, metricId: b.metricId ?? null, metricName: b.metricName ?? null, proposalId: b.proposalId ?? null, branch }))
    .filter((d) => c.workspace().metricReadable(d.metricId))
    .map((d) => d.targetDate);
  if (!dates.length) return ` ${metric} has no open book${where}${b.proposalId ? '' : ' (GET /predictions/markets lists the books)'}.`;
  return ` The open books of ${metric}${where} are for targetDate ${dates.join(', ')}.`;
}

/** Whether a body names its market another way as well as by marketId (then both must agree). */
export function namesMarketTwice(b: z.infer<typeof marketRef>): boolean {
  return Boolean(b.marketId) && [b.metricId, b.metricName, b.targetDate, b.proposalId, b.branch].some((v) => v !== undefined);
}

/** A marketId plus metricId/metricName/targetDate/proposalId/branch that describe another market: 400 naming both. */
function refuseContradiction(b: z.infer<typeof marketRef>, mk: MarketRow, now: Date): void {
  const clash: string[] = [];
  if (b.metricId !== undefined && b.metricId !== mk.metricId) clash.push(`metricId "${b.metricId}" (its metric is ${mk.metricId})`);
  if (b.metricName !== undefined && b.metricName.toLowerCase() !== mk.metricName.toLowerCase()) clash.push(`metricName "${b.metricName}" (its metric is "${mk.metricName}")`);
  if (b.targetDate !== undefined) {
    let date: string | null = null;
    try {
      date = parseTargetDate(b.targetDate, now).targetDate;
    } catch (err) {
      if (!(err instanceof HorizonError)) throw err;
    }
    if (date !== mk.targetDate) clash.push(`targetDate "${b.targetDate}" (its targetDate is ${mk.targetDate})`);
  }
  if (b.proposalId !== undefined && b.proposalId !== mk.proposalId) clash.push(`proposalId "${b.proposalId}" (${mk.proposalId ? `its proposal is ${mk.proposalId}` : 'it belongs to no proposal'})`);
  if (b.branch !== undefined && b.branch !== mk.branch) clash.push(`branch "${b.branch}" (${mk.branch ? `its branch is ${mk.branch}` : 'it is on no proposal branch'})`);
  if (clash.length) {
    throw new DomainError(
      'validation_failed',
      `marketId ${mk.id} and ${clash.join(', ')} name different markets: send marketId alone, or metricId/metricName plus targetDate (plus proposalId and branch) that describe the same market.`,
    );
  }
}

/** Market by marketId, or by metric (id or name) plus targetDate (plus proposalId and branch). */
export async function resolveTradeMarket(c: Call<z.infer<typeof marketRef>, unknown, unknown>, workspaceId: string): Promise<MarketRow> {
  const b = c.body;
  if (b.marketId) {
    const mk = await readableMarket(c as Call<unknown, unknown, unknown>, b.marketId);
    refuseContradiction(b, mk, c.deps.clock.now());
    return mk;
  }
  const branch = b.proposalId ? (b.branch ?? 'approved') : null;
  if (!(b.metricId || b.metricName)) {
    throw new DomainError('validation_failed', 'Identify the market by marketId, or by metricId (or metricName) plus targetDate.');
  }
  if (!b.targetDate) {
    const what = b.proposalId ? `a book of proposal ${b.proposalId} (${branch} branch)` : 'a book';
    throw new DomainError('validation_failed', `Name ${what} by targetDate as well as ${b.metricId ? 'metricId' : 'metricName'}.${await existingDates(c, workspaceId, branch)}`);
  }
  let targetDate: string;
  try {
    targetDate = parseTargetDate(b.targetDate, c.deps.clock.now()).targetDate;
  } catch (err) {
    if (err instanceof HorizonError) throw new DomainError('validation_failed', `${err.message}${await existingDates(c, workspaceId, branch)}`);
    throw err;
  }
  if (b.proposalId && !b.branch) c.deprecate("A proposal's market named without 'branch' defaults to 'approved'; send branch: 'approved' or 'declined'.");
  const mk = await marketByTargetDate(c.deps, { workspaceId, targetDate, metricId: b.metricId ?? null, metricName: b.metricName ?? null, proposalId: b.proposalId ?? null, branch });
  if (!mk || !(await readableRows(c.deps, c.workspace().policy, [mk])).length) {
    throw new DomainError(
      'market_not_found',
      `No market on ${b.metricName ?? b.metricId} for ${targetDate}${b.proposalId ? ` (${branch} branch)` : ''}.${await existingDates(c, workspaceId, branch)}`,
    );
  }
  return mk;
}

export const postPredictionsTrade = defineRoute({
  method: 'POST',
  path: '/predictions/trade',
  response: tradeResultSchema,
  errors: ['market_not_found', 'market_closed', 'market_resolved', 'market_voided', 'market_unfunded', 'proposal_closed', 'insufficient_balance', 'insufficient_shares', 'trade_too_small', 'price_moved', 'idempotency_key_reuse', 'trade_pending', 'trade_not_applied'],
  idempotent: true,
  auth: policies.markets.trade,
  summary:
    'Trade (catalog form): market by marketId or metric+targetDate; modes {direction, amount}, {targetValue, maxBudget}, {direction, sellShares}; limit price guard; dryRun; Idempotency-Key header.',
  body: tradeBody,
  handler: async (c) => {
    const caller = c.identity();
    const ws = c.workspace().workspace;
    const { spec, warnings } = tradeSpecOf(c.body);
    // The lane worker checks the market exists in this workspace; read it here only when the
    // request names it another way (or twice: both must agree), is a dry run, or the caller's groups narrow some metrics.
    const direct = c.body.marketId && !namesMarketTwice(c.body) && !c.body.dryRun && !c.workspace().narrowsMetrics;
    const mk = direct ? null : await resolveTradeMarket(c, ws.id);
    if (mk) c.workspace().requireMetricTradable(mk);
    const marketId = mk?.id ?? c.body.marketId!;
    for (const w of warnings) c.deprecate(w);
    if (c.body.dryRun) return presentTradeQuote(await dryRunTrade(c.deps, { agentId: caller.agentId, workspaceId: ws.id, marketId, spec }));
    const key = idempotencyKey(c);
    const outcome = await submitTrade(c.deps, {
      agentId: caller.agentId,
      workspaceId: ws.id,
      marketId,
      spec,
      idempotencyKey: key,
      hash: bodyHash({ path: '/predictions/trade', body: c.body }),
    });
    if (!outcome.ok) throw DomainError.fromBody(outcome.body);
    return presentTradeOutcome(outcome);
  },
});

export const postPredictionsMarketsByIdTrade = defineRoute({
  method: 'POST',
  path: '/predictions/markets/:id/trade',
  response: marketSchema.extend({ warnings }),
  errors: ['market_not_found', 'market_closed', 'market_resolved', 'market_voided', 'market_unfunded', 'proposal_closed', 'insufficient_balance', 'trade_too_small', 'idempotency_key_reuse', 'trade_pending', 'trade_not_applied'],
  idempotent: true,
  auth: policies.markets.tradeBook,
  summary: 'Trade (condensed form, superseded by POST /predictions/trade with { marketId, direction, amount }): { side: higher|lower, credits } buys that side; returns the updated Market.',
  deprecated: true,
  params: marketIdParam,
  body: z.object({ side: direction, credits: positiveCredits }),
  handler: async (c) => {
    const caller = c.identity();
    const ws = c.workspace().workspace;
    c.deprecate('The condensed trade form { side, credits } is superseded by POST /predictions/trade with { marketId, direction, amount }; it still works.');
    const mk = await readableMarket(c as Call<unknown, unknown, unknown>, c.params.id);
    c.workspace().requireMetricTradable(mk);
    const key = idempotencyKey(c);
    const outcome = await submitTrade(c.deps, {
      agentId: caller.agentId,
      workspaceId: ws.id,
      marketId: mk.id,
      spec: { mode: 'buy', direction: c.body.side, amount: toNano(c.body.credits) },
      idempotencyKey: key,
      hash: bodyHash({ path: `/predictions/markets/${mk.id}/trade`, body: c.body }),
    });
    if (!outcome.ok) throw DomainError.fromBody(outcome.body);
    return presentMarket(requireMarket(await marketInWorkspace(c.deps, ws.id, mk.id), mk.id), c.deps.clock.now());
  },
});

export const postPredictionsMarketsByIdFund = defineRoute({
  method: 'POST',
  path: '/predictions/markets/:id/fund',
  response: fundResultSchema,
  errors: ['market_not_found', 'conflict', 'insufficient_balance', 'idempotency_key_reuse'],
  auth: policies.markets.fund,
  idempotent: true,
  summary:
    "Fund an unfunded book { credits }: the caller's credits become its liquidity (it opens where it was planned to) and come back with the pool's remainder at resolution or void, pro rata among its funders. 409 conflict for a book already funded (a funded book takes no more liquidity) or no longer open. Idempotency-Key header.",
  params: marketIdParam,
  body: z.object({ credits: positiveCredits }),
  handler: async (c) => {
    const mk = await readableMarket(c as Call<unknown, unknown, unknown>, c.params.id);
    c.workspace().requireMetricTradable(mk);
    const { value, replay } = await fundMarket(c.deps, {
      agentId: c.identity().agentId,
      workspaceId: c.workspace().workspace.id,
      marketId: mk.id,
      liquidity: toNano(c.body.credits),
      idempotencyKey: idempotencyKey(c),
    });
    return presentFunding(value, replay, c.deps.clock.now());
  },
});

export const postPredictionsMarkets = defineRoute({
  method: 'POST',
  path: '/predictions/markets',
  response: marketSchema,
  successStatus: 201,
  errors: ['not_found', 'conflict', 'insufficient_balance'],
  auth: policies.markets.create,
  summary:
    "Open a book by hand on a metric and a target date outside the horizon plan: { metricId, targetDate (YYYY, YYYY-MM, YYYY-Www, YYYY-MM-DD, YYYY-MM-DDTHH, YYYY-MM-DDTHH:MM, +10d style or until-settled), liquidity? (credits from the caller; default the metric's liquidityCredits, else the workspace default; 0 opens it unfunded), title? }. It opens where a planned book would and the horizon pass never retires it. 409 when the metric already has a live book on that date; 400 insufficient_balance and nothing created when the caller cannot pay. 201 with the Market.",
  body: z.object({
    metricId: z.uuid('must be a metric id (a UUID)'),
    targetDate: z.string({ error: 'is required' }).trim().min(1, 'is required').max(40),
    liquidity: credits.optional(),
    title: z.string().trim().max(200, 'must be at most 200 characters').optional(),
  }),
  handler: async (c) => {
    const access = c.workspace();
    if (!access.metricReadable(c.body.metricId)) throw new DomainError('not_found', `Metric ${c.body.metricId} was not found.`);
    const mk = await openManualMarket(c.deps, {
      workspaceId: access.workspace.id,
      agentId: c.identity().agentId,
      metricId: c.body.metricId,
      targetDate: c.body.targetDate,
      liquidity: c.body.liquidity === undefined ? null : toNano(c.body.liquidity),
      title: c.body.title || null,
    });
    c.status(201);
    return presentMarket(mk, c.deps.clock.now());
  },
});

export const postPredictionsMarketsByIdVoid = defineRoute({
  method: 'POST',
  path: '/predictions/markets/:id/void',
  response: voidResultSchema,
  errors: ['market_not_found', 'market_resolved', 'market_voided', 'conflict', 'void_pending'],
  auth: policies.markets.voidBook,
  summary:
    "Void a book { reason (required, at most 500 characters) } on its lane: every position's net cost is refunded, the pool's remainder goes back to its funders, resting orders are cancelled; the reason is published in the data room. A proposal branch is voided by declining or withdrawing the proposal instead (409). Returns { market, refunded }.",
  params: marketIdParam,
  body: z.object({ reason: z.string({ error: 'is required' }).trim().min(1, 'is required: say why the market is voided').max(500, 'must be at most 500 characters') }),
  handler: async (c) => {
    const mk = await readableMarket(c as Call<unknown, unknown, unknown>, c.params.id);
    const r = await voidMarketByHand(c.deps, { workspaceId: c.workspace().workspace.id, marketId: mk.id, reason: c.body.reason });
    return presentVoid(r, c.deps.clock.now());
  },
});
