/**
 * A complete small trading agent, using only the public API and the types generated from
 * GET /api/openapi.json (examples/api.d.ts). Run: BASE=... KEY=... WS=... npx tsx build-agent.ts (the guides'
 * variables; CommonJS or ESM alike)
 *
 * Strategy: a metric's latest reading is the forecast; where a funded book's consensus sits more than
 * `edge` (2%) of its range away from it, move the price toward it with { targetValue, maxBudget }, after
 * a dry run shows what it would cost.
 */
import type { components, operations } from './api';

type Market = components['schemas']['Market'];
type Metric = components['schemas']['Metric'];
type TradeBody = NonNullable<operations['postPredictionsTrade']['requestBody']>['content']['application/json'];
type TradeAnswer = operations['postPredictionsTrade']['responses']['200']['content']['application/json'];
type ApiError = components['schemas']['Error'];

// The guides' variables (BASE, KEY, WS); the older BASE_URL, AGENT_KEY and WORKSPACE still work.
const BASE = process.env.BASE ?? process.env.BASE_URL ?? 'http://localhost:3000/api';
const KEY = process.env.KEY ?? process.env.AGENT_KEY ?? '';
const WORKSPACE = process.env.WS ?? process.env.WORKSPACE ?? '';

/** One call: JSON in and out; retryable refusals (429, 503) are retried after Retry-After. */
export async function call<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${BASE}${path}`, {
      method,
      headers: {
        'X-Agent-Key': KEY,
        'X-Workspace-Id': WORKSPACE,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.ok) return (await res.json()) as T;
    const err = (await res.json()) as ApiError;
    const wait = Number(res.headers.get('retry-after') ?? 0);
    if (wait > 0 && attempt < 5) {
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue; // same body, same Idempotency-Key: applied at most once
    }
    throw new Error(`${method} ${path}: ${res.status} ${err.code}: ${err.error}`);
  }
}

/** The price this agent would move a book to, or null when the book is close enough. */
export function targetFor(market: Market, metric: Metric | undefined, edge = 0.02): number | null {
  if (!metric || metric.total === null || market.consensus === null || market.status !== 'open') return null;
  const width = market.rangeMax - market.rangeMin;
  const forecast = Math.min(market.rangeMax, Math.max(market.rangeMin, metric.total));
  return Math.abs(forecast - market.consensus) > edge * width ? forecast : null;
}

export async function runOnce(maxBudget = 5): Promise<number> {
  const metrics = await call<Metric[]>('GET', '/metrics');
  const byId = new Map(metrics.map((m) => [m.id, m]));
  const markets = await call<Market[]>('GET', '/predictions/markets?limit=50');
  let trades = 0;
  for (const market of markets.filter((m) => m.funded && m.proposalId === null)) {
    const target = targetFor(market, byId.get(market.metricId));
    if (target === null) continue;
    const order: TradeBody = { marketId: market.id, targetValue: target, maxBudget };
    const quote = await call<TradeAnswer>('POST', '/predictions/trade', { ...order, dryRun: true });
    if ('affordable' in quote && !quote.affordable) continue;
    const done = await call<TradeAnswer>('POST', '/predictions/trade', order, `agent-${market.id}-${market.tradeCount}`);
    console.log(`${market.metricName} ${market.targetDate}: ${market.consensus} -> ${done.consensus} (${done.direction}, ${done.shares} shares, balance ${done.balance})`);
    trades++;
  }
  return trades;
}

// Run directly (node or tsx, in a CommonJS or an ESM project: no require.main, which ESM lacks); imported, it only exports.
if (/build-agent\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  runOnce().then(
    (n) => console.log(`${n} trade(s)`),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
