import { Client } from 'pg';
import { laneBatches } from '../../src/services/trading';
import type { TestApp } from './harness';
import { uniqueName } from './harness';
import { joinWorkspace, mint, registerAgent, type TestAgent, type TestWorkspace } from './factories';
import { waitFor } from './services';

/**
 * Hold the book's row, start `first`, wait for its job to be in flight, queue `rest` in order behind
 * it (each waits for its lane's next batch), then let go. `afterFirst`, if given, is sent the moment
 * `first` is answered (a caller sending again at once); its answer comes last.
 */
export async function gathered<T>(
  app: TestApp,
  marketId: string,
  first: () => PromiseLike<T>,
  rest: Array<() => PromiseLike<T>>,
  whileHeld?: () => Promise<void>,
  afterFirst?: () => PromiseLike<T>,
): Promise<T[]> {
  const holder = new Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM markets WHERE id = $1 FOR UPDATE', [marketId]);
    const q = app.deps.hub.queue(app.deps.hub.queueFor('trade', marketId));
    const before = await q.getActiveCount();
    const head = Promise.resolve(first()); // a supertest request is sent once awaited
    await waitFor('the first batch to be in flight', async () => (await q.getActiveCount()) > before);
    // One at a time, so that they queue (and apply) in this order.
    const tail: Array<Promise<T>> = [];
    const received = laneBatches(app.deps).received();
    for (const f of rest) {
      tail.push(Promise.resolve(f()));
      await waitFor('the request to reach its lane', async () => laneBatches(app.deps).received() === received + tail.length, 20_000, 5);
    }
    await whileHeld?.();
    await holder.query('ROLLBACK');
    const again = afterFirst ? [head.then(() => afterFirst())] : [];
    return await Promise.all([head, ...tail, ...again]);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await holder.end();
  }
}

export interface TestMetric {
  id: string;
  name: string;
}

export async function createMetric(app: TestApp, ws: TestWorkspace, body: Record<string, unknown> = {}): Promise<TestMetric> {
  const name = (body.name as string) ?? uniqueName('metric');
  const res = await app.http
    .post('/api/metrics')
    .set('X-Agent-Key', ws.owner.key)
    .set('X-Workspace-Id', ws.id)
    .send({ value: 500, ...body, name });
  if (res.status !== 201 && res.status !== 200) throw new Error(`metric failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, name };
}

export async function marketsOf(app: TestApp, ws: TestWorkspace, metricId: string): Promise<any[]> {
  const res = await app.http.get(`/api/predictions/markets?metricId=${metricId}&limit=200`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id);
  if (res.status !== 200) throw new Error(`markets failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A member of a public workspace with credits. */
export async function trader(app: TestApp, ws: TestWorkspace, credits = 1000): Promise<TestAgent> {
  const a = await registerAgent(app);
  await joinWorkspace(app, ws, a);
  if (credits > 0) await mint(app, a.id, credits);
  return a;
}

export function trade(app: TestApp, ws: TestWorkspace, who: TestAgent, body: Record<string, unknown>, idempotencyKey?: string) {
  const req = app.http.post('/api/predictions/trade').set('X-Agent-Key', who.key).set('X-Workspace-Id', ws.id);
  if (idempotencyKey) req.set('Idempotency-Key', idempotencyKey);
  return req.send(body);
}

export async function balanceOf(app: TestApp, who: TestAgent): Promise<number> {
  const res = await app.http.get('/api/agents/me/balance').set('X-Agent-Key', who.key);
  return res.body.balance;
}

/** A fresh metric's first book (at consensus `value` on 0..1000: p = value / 1000, liquidity 100); its id. */
export async function freshBookId(app: TestApp, ws: TestWorkspace, value = 500): Promise<string> {
  const metric = await createMetric(app, ws, { value });
  return (await marketsOf(app, ws, metric.id))[0].id;
}

/**
 * Resolved books' standings are added by the `standings` job after the resolution commits: wait for
 * them deterministically with a sweep through the workers (it adds every pending book, and waits on
 * the row lock of one a job is adding), before reading profiles, the leaderboard or seasons.
 */
export async function standingsAdded(app: TestApp): Promise<{ books: number; holders: number }> {
  const r = await app.deps.hub.enqueueAndWait('standings', 'sweep', {}, { waitMs: 30_000 });
  if (!r.finished) throw new Error('the standings sweep did not finish');
  return r.result;
}
