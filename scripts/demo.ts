/**
 * `npm run demo`: seeds a running instance with a demo workspace (public, two metrics with their
 * books), its owner funded by the operator, and a participant funded by the owner who has traded
 * once; prints the participant's key and the variables the guides use. Everything goes through the
 * public API, as a person following the overview guide would.
 *   MASTER=<master key> npm run demo      (BASE defaults to http://localhost:3000/api)
 * The master key is the one the first `npm start` printed (or MASTER_API_KEY).
 */
import { randomBytes } from 'node:crypto';

export interface Demo {
  workspace: { id: string; slug: string };
  owner: { agentId: string; apiKey: string };
  trader: { agentId: string; apiKey: string; balance: number };
  metrics: Array<{ id: string; name: string }>;
  markets: number;
}

export async function seedDemo(base: string, master: string): Promise<Demo> {
  const call = async <T>(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> => {
    const send = () =>
      fetch(`${base}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res = await send();
    // A retryable answer (Retry-After: a trade still queued, a rate limit) is sent again, same Idempotency-Key.
    for (let i = 0; i < 10 && res.headers.has('retry-after'); i++) {
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') || 1)));
      res = await send();
    }
    const json = (await res.json().catch(() => null)) as T & { error?: string };
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${json?.error ?? JSON.stringify(json)}`);
    return json;
  };
  const tag = randomBytes(3).toString('hex');
  const owner = await call<{ agentId: string; apiKey: string }>('POST', '/agents/register', { agentId: `demo-owner-${tag}`, nickname: `demo-owner-${tag}`, bio: 'Owns the demo workspace' });
  await call('POST', `/agents/${owner.agentId}/credit`, { amount: 100_000, reason: 'demo' }, { 'X-API-Key': master });
  const asOwner = { 'X-Agent-Key': owner.apiKey };
  const ws = await call<{ id: string; slug: string }>('POST', '/workspaces', { name: `Demo ${tag}`, slug: `demo-${tag}`, public: true, description: 'A demo workspace seeded by npm run demo.' }, asOwner);
  const inWs = { ...asOwner, 'X-Workspace-Id': ws.id };
  const metrics = [
    await call<{ id: string; name: string }>('POST', '/metrics', { name: 'Signups', value: 420, marketRangeMax: 1000, description: 'New accounts a month' }, inWs),
    await call<{ id: string; name: string }>('POST', '/metrics', { name: 'Revenue', value: 12_000, marketRangeMax: 50_000, description: 'Monthly revenue, USD' }, inWs),
  ];
  const books = await call<Array<{ id: string; metricId: string }>>('GET', '/predictions/markets?limit=200', undefined, inWs);
  const trader = await call<{ agentId: string; apiKey: string }>('POST', '/agents/register', { agentId: `demo-trader-${tag}`, nickname: `demo-trader-${tag}`, bio: 'A funded demo participant' });
  const asTrader = { 'X-Agent-Key': trader.apiKey, 'X-Workspace-Id': ws.id };
  await call('POST', `/marketplace/${ws.slug}/join`, undefined, { 'X-Agent-Key': trader.apiKey });
  await call('POST', `/agents/${trader.agentId}/credit`, { amount: 1_000, reason: 'demo' }, inWs);
  const first = books.find((b) => b.metricId === metrics[0].id);
  if (first) await call('POST', '/predictions/trade', { marketId: first.id, direction: 'higher', amount: 10 }, { ...asTrader, 'Idempotency-Key': `demo-${tag}` });
  const { balance } = await call<{ balance: number }>('GET', '/agents/me/balance', undefined, asTrader);
  return { workspace: ws, owner, trader: { ...trader, balance }, metrics, markets: books.length };
}

async function main(): Promise<void> {
  const base = (process.env.BASE ?? 'http://localhost:3000/api').replace(/\/+$/, '');
  const master = process.env.MASTER ?? process.env.MASTER_API_KEY;
  if (!master) {
    console.error('Set MASTER to the master key the first npm start printed (or MASTER_API_KEY): MASTER=... npm run demo');
    process.exit(1);
  }
  const d = await seedDemo(base, master);
  console.log(`demo workspace "${d.workspace.slug}": ${d.metrics.map((m) => m.name).join(' and ')}, ${d.markets} books`);
  console.log(`a funded participant ${d.trader.agentId} (${d.trader.balance} credits); its key, shown once:`);
  console.log(`  ${d.trader.apiKey}`);
  console.log('the guides\' variables:');
  console.log(`  export BASE=${base} WS=${d.workspace.slug} KEY=${d.trader.apiKey} OWNER_KEY=${d.owner.apiKey} ADMIN_KEY=${d.owner.apiKey} METRIC=${d.metrics[0].id} SIGNUPS=${d.metrics[0].id}`);
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
