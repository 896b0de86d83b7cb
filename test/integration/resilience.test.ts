import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { migrations } from '../../migrations';
import { openDatabase } from '../../src/db/dataSource';
import { inTransaction } from '../../src/db/tx';
import { toNano } from '../../src/domain/money';
import { accountId } from '../../src/services/ledger';
import { resolveDueBatch, settleBook } from '../../src/services/lifecycle';
import { applyTradeJob, serializeSpec } from '../../src/services/trading';
import { buildWorkspace, type TestWorkspace } from '../helpers/factories';
import { expectLedgerSound, startTestApp, useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { lockWaiters } from '../helpers/lockWaits';
import { freePort, PrivateRedis, ServiceProcess, waitFor } from '../helpers/services';

/**
 * The money path under faults, one fault at a time and deterministically (the fault harness in
 * test/faults/ mixes them under load): jobs run twice, lost jobs, a dead worker, Redis erased,
 * dropped Postgres connections, log hygiene, processes starting together.
 */

const dbUrl = () => process.env.DATABASE_URL!;
/** How long a spawned service process may take to start (tsx compiles it first): on a slow, busy machine it took over 30 s. */
const SPAWN_START_MS = 90_000;

let monitorClient: Client | undefined;
async function monitor(): Promise<Client> {
  monitorClient ??= await pgClient();
  return monitorClient;
}
afterAll(async () => {
  await monitorClient?.end();
});

async function pgClient(url = dbUrl()): Promise<Client> {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** Postgres backends (of this database) waiting on a lock that `holder` holds, in a statement that mentions `table`. */
async function blockedBy(holder: Client, table: string): Promise<number[]> {
  const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
  return (await lockWaiters(await monitor(), [pid])).filter((w) => w.query.includes(table)).map((w) => w.pid);
}

async function tradeRows(app: TestApp, requestId: string): Promise<number> {
  const r = await app.deps.ds.query(`SELECT count(*)::int AS n FROM trades WHERE request_id = $1 AND kind <> 'redeem'`, [requestId]);
  return r[0].n;
}

/**
 * A keyed trade refused for want of credit: its failed row keeps the key until a retry of it frees
 * the key (a refusal does not consume it) with a DELETE the API sends outside any transaction. A
 * test holding that row blocks the retry there.
 */
async function refusedKey(app: TestApp, s: Awaited<ReturnType<typeof bookSetup>>, key: string): Promise<() => Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, string> }>> {
  const send = () => trade(app, s.ws, { id: s.traderId, key: s.traderKey, nickname: '' }, { marketId: s.marketId, direction: 'lower', amount: 5000 }, key).then((r) => r);
  const first = await send();
  expect(first.body.code).toBe('insufficient_balance');
  return send;
}

async function fund(app: TestApp, s: Awaited<ReturnType<typeof bookSetup>>, amount: number): Promise<void> {
  const r = await app.http.post(`/api/agents/${s.traderId}/credit`).set('X-Agent-Key', s.ws.owner.key).set('X-Workspace-Id', s.ws.id).send({ amount });
  expect(r.status).toBe(200);
}

const HOLD_KEY_ROW = `SELECT 1 FROM trade_requests WHERE agent_id = $1 AND idempotency_key = $2 FOR UPDATE`;

async function bookSetup(app: TestApp): Promise<{ ws: TestWorkspace; marketId: string; traderId: string; traderKey: string }> {
  const ws = await buildWorkspace(app, { public: true, ownerCredits: 10_000 });
  const metric = await createMetric(app, ws, { value: 500 });
  const [mk] = await marketsOf(app, ws, metric.id);
  const t = await trader(app, ws, 1000);
  return { ws, marketId: mk.id, traderId: t.id, traderKey: t.key };
}

describe('the trade transaction on its own (item 1)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a));

  it('a job run twice at once (two workers, no lane) applies its trade once', async () => {
    const { ws, marketId, traderId } = await bookSetup(app);
    for (let i = 0; i < 12; i++) {
      const job = { requestId: randomUUID(), agentId: traderId, workspaceId: ws.id, marketId, spec: serializeSpec({ mode: 'buy', direction: i % 2 ? 'higher' : 'lower', amount: toNano(3) }) };
      const [a, b] = await Promise.all([applyTradeJob(app.deps, job), applyTradeJob(app.deps, job)]);
      expect(a.ok).toBe(true);
      expect(b.body.tradeId).toBe(a.body.tradeId);
      expect(await tradeRows(app, job.requestId)).toBe(1);
    }
    // The position equals the replay of its recorded trades.
    const [pos] = await app.deps.ds.query(`SELECT shares_higher, shares_lower FROM positions WHERE market_id = $1 AND agent_id = $2`, [marketId, traderId]);
    const trades = await app.deps.ds.query(`SELECT kind, direction, shares FROM trades WHERE market_id = $1 AND agent_id = $2 ORDER BY seq`, [marketId, traderId]);
    let h = 0n;
    let l = 0n;
    for (const t of trades) {
      const s = BigInt(t.shares);
      if (t.kind === 'buy') {
        if (t.direction === 'higher') h += s;
        else l += s;
      } else if (t.kind === 'sell') {
        if (t.direction === 'higher') h -= s;
        else l -= s;
      } else {
        h -= s;
        l -= s;
      }
    }
    expect({ h: BigInt(pos.shares_higher), l: BigInt(pos.shares_lower) }).toEqual({ h, l });
  });

  it('settlement and resolution jobs run twice at once pay each holder once', async () => {
    const { ws, marketId, traderId } = await bookSetup(app);
    const job = { requestId: randomUUID(), agentId: traderId, workspaceId: ws.id, marketId, spec: serializeSpec({ mode: 'buy', direction: 'higher', amount: toNano(20) }) };
    expect((await applyTradeJob(app.deps, job)).ok).toBe(true);
    const balance = async () => BigInt((await app.deps.ds.query('SELECT balance FROM accounts WHERE id = $1', [accountId.agent(traderId)]))[0].balance);
    const before = await balance();
    const now = app.deps.clock.now();
    const runs = await Promise.all([0, 1].map(() => inTransaction(app.deps.ds, (m) => settleBook(m, marketId, 800, 'twice', now))));
    expect(runs.filter((r) => r.settled)).toHaveLength(1);
    const paid = (await balance()) - before;
    expect(paid).toBe(runs.find((r) => r.settled)!.payout);
    // A resolution batch of the settled book, twice at once: nothing more moves.
    await Promise.all([0, 1].map(() => inTransaction(app.deps.ds, (m) => resolveDueBatch(m, [marketId], new Date(now.getTime() + 400 * 86400_000)))));
    expect((await balance()) - before).toBe(paid);
    const [{ n }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE ref = $1 AND kind = 'payout'`, [marketId]);
    expect(n).toBe(2); // one transfer (two legs) to the only holder
  });
});

describe('no key stuck (item 3)', () => {
  let app: TestApp;
  // The lane's queue path: a batch that applies at once (issue 66) has no job to lose.
  useTestApp((a) => (app = a), { TRADE_WAIT_MS: '400', TRADE_RECOVERY_AFTER_MS: '0', TRADE_APPLY_AT_ONCE: 'false' });

  /** A keyed trade whose job is lost before it runs (as with a SIGKILL after the insert, or Redis erased). */
  async function lostTrade(s: Awaited<ReturnType<typeof bookSetup>>, key: string): Promise<string> {
    const q = app.deps.hub.queue(app.deps.hub.queueFor('trade', s.marketId));
    await q.pause();
    try {
      const first = await trade(app, s.ws, { id: s.traderId, key: s.traderKey, nickname: '' }, { marketId: s.marketId, direction: 'higher', amount: 2 }, key);
      expect(first.status).toBe(503);
      expect(first.body.code).toBe('trade_pending');
      expect(first.headers['retry-after']).toBe('1');
      const requestId = first.body.requestId as string;
      expect(await q.remove(requestId)).toBe(1);
      return requestId;
    } finally {
      await q.resume();
    }
  }

  it('a client retry of a key whose job was lost gets the trade applied once', async () => {
    const s = await bookSetup(app);
    const key = `k-${randomUUID()}`;
    const requestId = await lostTrade(s, key);
    const who = { id: s.traderId, key: s.traderKey, nickname: '' };
    const retry = await trade(app, s.ws, who, { marketId: s.marketId, direction: 'higher', amount: 2 }, key);
    expect(retry.status).toBe(200);
    expect(retry.body.idempotentReplay).toBe(true);
    const again = await trade(app, s.ws, who, { marketId: s.marketId, direction: 'higher', amount: 2 }, key);
    expect(again.body.tradeId).toBe(retry.body.tradeId);
    expect(await tradeRows(app, requestId)).toBe(1);
  });

  it('the recovery pass gives a lost request a definite outcome without any client retry', async () => {
    const s = await bookSetup(app);
    const key = `k-${randomUUID()}`;
    const requestId = await lostTrade(s, key);
    const started = Date.now();
    await app.workers!.watchdog.tick();
    const status = await waitFor('a definite outcome', async () => {
      const [r] = await app.deps.ds.query(`SELECT status FROM trade_requests WHERE request_id = $1`, [requestId]);
      return r.status !== 'pending' ? r.status : undefined;
    });
    console.log(`recovery pass to definite outcome: ${Date.now() - started} ms`);
    expect(status).toBe('done');
    expect(await tradeRows(app, requestId)).toBe(1);
    const replay = await trade(app, s.ws, { id: s.traderId, key: s.traderKey, nickname: '' }, { marketId: s.marketId, direction: 'higher', amount: 2 }, key);
    expect(replay.status).toBe(200);
    expect(replay.body.idempotentReplay).toBe(true);
  });
});

describe('a trade applied at once, in the API process (issue 66)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { TRADE_WAIT_MS: '400' });

  it('a lone trade applies without its lane queue: with the lane paused it is answered 200 and no job waits there', async () => {
    const s = await bookSetup(app);
    const q = app.deps.hub.queue(app.deps.hub.queueFor('trade', s.marketId));
    await q.pause();
    try {
      const res = await trade(app, s.ws, { id: s.traderId, key: s.traderKey, nickname: '' }, { marketId: s.marketId, direction: 'higher', amount: 2 }, `k-${randomUUID()}`);
      expect(res.status).toBe(200);
      expect(await q.getWaitingCount()).toBe(0);
    } finally {
      await q.resume();
    }
  });

  it('held up past TRADE_WAIT_MS by a lock, it answers trade_pending, is journalled pending, and applies once when the lock goes', async () => {
    const s = await bookSetup(app);
    const who = { id: s.traderId, key: s.traderKey, nickname: '' };
    const key = `k-${randomUUID()}`;
    const holder = await pgClient();
    let requestId: string;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM markets WHERE id = $1 FOR UPDATE', [s.marketId]);
      const first = await trade(app, s.ws, who, { marketId: s.marketId, direction: 'higher', amount: 2 }, key);
      expect(first.status).toBe(503);
      expect(first.body.code).toBe('trade_pending');
      expect(first.headers['retry-after']).toBe('1');
      requestId = first.body.requestId as string;
      const [row] = await app.deps.ds.query(`SELECT status, job IS NOT NULL AS has_job FROM trade_requests WHERE request_id = $1`, [requestId]);
      expect(row).toEqual({ status: 'pending', has_job: true });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    await waitFor('the held transaction to commit', async () => (await app.deps.ds.query(`SELECT status FROM trade_requests WHERE request_id = $1`, [requestId]))[0].status === 'done');
    const retry = await trade(app, s.ws, who, { marketId: s.marketId, direction: 'higher', amount: 2 }, key);
    expect(retry.status).toBe(200);
    expect(retry.body.idempotentReplay).toBe(true);
    expect(await tradeRows(app, requestId)).toBe(1);
  });
});

describe('retryable answers for infrastructure blips (item 5)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a));

  it('a connection dropped inside a transaction is retried inside: the credit moves once', async () => {
    const s = await bookSetup(app);
    const holder = await pgClient();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId.agent(s.traderId)]);
      const before = (await app.deps.ds.query('SELECT balance FROM accounts WHERE id = $1', [accountId.agent(s.traderId)]))[0].balance;
      const pending = app.http.post(`/api/agents/${s.traderId}/credit`).set('X-Agent-Key', s.ws.owner.key).set('X-Workspace-Id', s.ws.id).send({ amount: 7 });
      const done = pending.then((r) => r);
      const [victim] = await waitFor('the blocked credit move', async () => {
        const pids = await blockedBy(holder, 'accounts');
        return pids.length ? pids : undefined;
      });
      await holder.query('SELECT pg_terminate_backend($1)', [victim]);
      await waitFor('the retried move to wait again', async () => (await blockedBy(holder, 'accounts')).length > 0);
      await holder.query('COMMIT');
      const res = await done;
      expect(res.status).toBe(200);
      const after = (await app.deps.ds.query('SELECT balance FROM accounts WHERE id = $1', [accountId.agent(s.traderId)]))[0].balance;
      expect(BigInt(after) - BigInt(before)).toBe(toNano(7));
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });

  it('a connection dropped outside a transaction answers 503 service_unavailable with Retry-After, then the retry works', async () => {
    const s = await bookSetup(app);
    const key = `k-${randomUUID()}`;
    const send = await refusedKey(app, s, key);
    // Funded now, before the blip, so that only the request under test meets it.
    await fund(app, s, 5000);
    const holder = await pgClient();
    try {
      // The refused request's row, held: the retry's DELETE of it (outside a transaction) waits.
      await holder.query('BEGIN');
      await holder.query(HOLD_KEY_ROW, [s.traderId, key]);
      const done = send();
      const [victim] = await waitFor('the blocked delete of the refused row', async () => {
        const pids = await blockedBy(holder, 'trade_requests');
        return pids.length ? pids : undefined;
      });
      await holder.query('SELECT pg_terminate_backend($1)', [victim]);
      const res = await done;
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('service_unavailable');
      expect(res.headers['retry-after']).toBe('1');
      await holder.query('ROLLBACK');
      const retry = await send();
      expect(retry.status).toBe(200);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });
});

// Restarts a Redis of its own (redis-server): nothing to restart on the Postgres-only layout.
(process.env.QUEUE_BACKEND === 'postgres' ? describe.skip : describe)('Redis restarted without persistence (items 2 and 6)', () => {
  let redis: PrivateRedis;
  let app: TestApp;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    app = await startTestApp({ REDIS_URL: redis.url, WATCHDOG_INTERVAL_MS: '500', TRADE_APPLY_AT_ONCE: 'false' }); // the queue path's jobs (issue 66)
  });
  afterAll(async () => {
    await expectLedgerSound(app.deps);
    await app.close();
    await redis.stop();
  });

  it('every lane gets its global concurrency back, and trades still apply', async () => {
    const lanes = app.deps.hub.queueNames('trade');
    for (const l of lanes) expect(await app.deps.hub.queue(l).getGlobalConcurrency()).toBe(1);
    // A healthy lane is read, not written: the watchdog sets nothing while the setting holds.
    await app.workers!.watchdog.tick();
    expect(app.workers!.watchdog.reasserted).toBe(0);
    await redis.restart();
    const t0 = Date.now();
    await waitFor('lane concurrency re-asserted', async () => {
      for (const l of lanes) if ((await app.deps.hub.queue(l).getGlobalConcurrency()) !== 1) return false;
      return true;
    }, 15_000);
    console.log(`lane concurrency back ${Date.now() - t0} ms after the Redis restart`);
    expect(app.workers!.watchdog.reasserted).toBeGreaterThanOrEqual(lanes.length);
    const s = await bookSetup(app);
    const res = await trade(app, s.ws, { id: s.traderId, key: s.traderKey, nickname: '' }, { marketId: s.marketId, direction: 'higher', amount: 1 }, `k-${randomUUID()}`);
    expect(res.status).toBe(200);
  });

  it('a trade whose queued job Redis erased is answered (200, applied once) without waiting out TRADE_WAIT_MS or the recovery pass', async () => {
    const s = await bookSetup(app);
    const q = app.deps.hub.queue(app.deps.hub.queueFor('trade', s.marketId));
    // Paused, the lane holds the batch's job in Redis unrun; the restart erases the job and the pause.
    await q.pause();
    const key = `k-${randomUUID()}`;
    const answer = trade(app, s.ws, { id: s.traderId, key: s.traderKey, nickname: '' }, { marketId: s.marketId, direction: 'higher', amount: 1 }, key).then((r) => r);
    // Nothing is journalled before the batch: the request is only in its job, which Redis holds.
    const requestId = await waitFor('its job in Redis', async () => {
      const jobs = await q.getWaiting();
      return jobs.find((j) => (j.data as { trades: Array<{ key?: string }> }).trades.some((t) => t.key === key))?.id;
    });
    await redis.restart();
    const back = Date.now();
    const res = await answer;
    console.log(`a trade cut off by a Redis restart answered ${Date.now() - back} ms after Redis answered (TRADE_WAIT_MS ${app.deps.config.TRADE_WAIT_MS})`);
    // The old code waited TRADE_WAIT_MS for the erased job, polled as long, and nothing (the
    // recovery pass only takes requests older than TRADE_RECOVERY_AFTER_MS) enqueued it again: 503.
    expect(res.status).toBe(200);
    expect(await tradeRows(app, requestId)).toBe(1);
  }, 60_000);

  it('a service process logs JSON lines only, with no SQL, parameters, keys or key hashes, through a Redis restart and a dropped connection', async () => {
    const s = await bookSetup(app);
    const port = await freePort();
    const api = ServiceProcess.spawn('api', {
      DATABASE_URL: dbUrl(),
      REDIS_URL: redis.url,
      PORT: String(port),
      QUEUE_PREFIX: app.prefix,
      TRADE_LANES: '4',
      MASTER_API_KEY: app.masterKey,
      SCHEDULER: 'false',
    });
    const holder = await pgClient();
    try {
      await api.waitForLine('started', (l) => l.includes('"started"'), SPAWN_START_MS);
      const base = `http://127.0.0.1:${port}/api`;
      const key = `k-${randomUUID()}`;
      const post = () =>
        fetch(`${base}/predictions/trade`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-agent-key': s.traderKey, 'x-workspace-id': s.ws.id, 'idempotency-key': key },
          body: JSON.stringify({ marketId: s.marketId, direction: 'lower', amount: 5000 }),
        });
      expect(((await (await post()).json()) as { code?: string }).code).toBe('insufficient_balance');
      await fund(app, s, 5000);
      // A dropped connection while the request waits on a lock (the retry's DELETE of the refused
      // row): logged as a warning with its error.
      await holder.query('BEGIN');
      await holder.query(HOLD_KEY_ROW, [s.traderId, key]);
      const pending = post();
      const [victim] = await waitFor('blocked delete', async () => {
        const pids = await blockedBy(holder, 'trade_requests');
        return pids.length ? pids : undefined;
      });
      await holder.query('SELECT pg_terminate_backend($1)', [victim]);
      await pending; // its status is item 5's business; here only what it logs matters
      await holder.query('ROLLBACK');
      await redis.restart();
      await new Promise((r) => setTimeout(r, 1500));
      expect((await post()).status).toBe(200);
      await api.waitForLine('the warning of the dropped connection', (l) => l.includes('infrastructure blip'));
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await api.kill('SIGTERM');
    }
    const secrets = [s.traderKey, createHash('sha256').update(s.traderKey).digest('hex'), app.masterKey];
    const bad = api.lines.filter((l) => {
      try {
        JSON.parse(l);
      } catch {
        return true;
      }
      return secrets.some((x) => l.includes(x)) || /\bINSERT INTO\b|\bSELECT\b.*\bFROM\b|"parameters"|"query"/.test(l);
    });
    expect(bad).toEqual([]);
    expect(api.lines.length).toBeGreaterThan(2);
  }, SPAWN_START_MS + 60_000);
});

// Redis only: it finds the worker through getWorkersCount, which on Postgres names connections the shared one does not have.
(process.env.QUEUE_BACKEND === 'postgres' ? describe.skip : describe)('a dead worker (item 4)', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { TRADE_WAIT_MS: '8000' }, { workers: false });

  it("after SIGKILL of the worker holding a lane's job, the next trade on that lane completes (within 5 s)", async () => {
    const s = await bookSetup(app);
    const who = { id: s.traderId, key: s.traderKey, nickname: '' };
    const worker = ServiceProcess.spawn('worker', {
      DATABASE_URL: dbUrl(),
      REDIS_URL: app.deps.config.redisUrl,
      QUEUE_PREFIX: app.prefix,
      TRADE_LANES: '4',
      MASTER_API_KEY: app.masterKey,
      SCHEDULER: 'false',
      LOG_LEVEL: 'warn',
    });
    const holder = await pgClient();
    try {
      await waitFor('the worker to take jobs', async () => (await app.deps.hub.queue(app.deps.hub.queueFor('trade', s.marketId)).getWorkersCount()) > 0, SPAWN_START_MS);
      // Hold the book so the worker's job stays active until the kill.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM markets WHERE id = $1 FOR UPDATE', [s.marketId]);
      const keyA = `k-${randomUUID()}`;
      const a = trade(app, s.ws, who, { marketId: s.marketId, direction: 'higher', amount: 1 }, keyA).then((r) => r);
      const q = app.deps.hub.queue(app.deps.hub.queueFor('trade', s.marketId));
      await waitFor('the worker to hold the job', async () => (await q.getActive()).some((j) => (j.data as { trades: Array<{ key?: string }> }).trades.some((t) => t.key === keyA)));
      await worker.kill('SIGKILL');
      const killedAt = Date.now();
      await app.startWorkers();
      await holder.query('ROLLBACK');
      const b = await trade(app, s.ws, who, { marketId: s.marketId, direction: 'lower', amount: 1 }, `k-${randomUUID()}`);
      const ms = Date.now() - killedAt;
      console.log(`next trade on the dead worker's lane completed ${ms} ms after the SIGKILL`);
      expect(b.status).toBe(200);
      const ra = await a;
      const retryA = ra.status === 200 ? ra : await trade(app, s.ws, who, { marketId: s.marketId, direction: 'higher', amount: 1 }, keyA);
      expect(retryA.status).toBe(200);
      const [rowA] = await app.deps.ds.query(`SELECT request_id FROM trade_requests WHERE idempotency_key = $1`, [keyA]);
      expect(await tradeRows(app, rowA.request_id)).toBe(1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await worker.kill('SIGKILL');
    }
  }, SPAWN_START_MS + 60_000);
});

describe('start-up in any number (item 7)', () => {
  it('four processes opening a new database at once all start, and migrate it once', async () => {
    const base = new URL(dbUrl());
    const name = `mpps_startup_${randomBytes(4).toString('hex')}`;
    base.pathname = `/${name}`;
    const url = base.toString();
    const opened = await Promise.allSettled(Array.from({ length: 4 }, () => openDatabase(url, { migrate: true, poolSize: 2 })));
    try {
      expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok']);
      const ds = (opened[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof openDatabase>>>).value;
      const ran = await ds.query(`SELECT name FROM migrations ORDER BY id`);
      expect(ran.map((r: { name: string }) => r.name)).toEqual(migrations.map((M) => new M().name));
    } finally {
      for (const o of opened) if (o.status === 'fulfilled') await o.value.destroy();
      const admin = await pgClient(dbUrl());
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
