import { queueSchema } from '../../jobs/definitions';
import { LEASE_MAX } from '../../src/services/access';
import { buildWorkspace, registerAgent } from '../helpers/factories';
import { startTestApp, useTestApp, uniqueName, type TestApp } from '../helpers/harness';
import { freshBookId, trade, trader } from '../helpers/markets';

/** Rate limits (spec §4.2, §8) on Redis or Postgres, lowered through the test app's configuration. */

function expectLimited(res: { status: number; body: any; headers: Record<string, string> }): void {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: 'rate_limited', error: expect.any(String), retryAfter: expect.any(Number), limit: expect.any(Number) });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(res.headers['retry-after'])).toBe(res.body.retryAfter);
}

/**
 * Two apps with their own deps (connections, limiter objects, caches) on one Redis or Postgres and
 * one queue prefix, at `limit` requests a minute per key: two API processes as far as the limit can tell.
 */
function useTwoProcesses(limit: number): { a: () => TestApp; b: () => TestApp } {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ RATE_LIMIT_KEY_PER_MINUTE: String(limit) });
    b = await startTestApp({ RATE_LIMIT_KEY_PER_MINUTE: String(limit), QUEUE_PREFIX: a.prefix }, { workers: false });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });
  return { a: () => a, b: () => b };
}

/** Every command the app's own Redis client (the API path's, not the queues') sends goes to `seen`; returns the undo. None on the Postgres layout. */
function watchRedis(app: TestApp, seen: (name: string) => void): () => void {
  const redis = app.deps.redis;
  if (!redis) return () => undefined;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((cmd: { name: string }, stream?: unknown) => {
    seen(cmd.name);
    return send(cmd as never, stream as never);
  }) as typeof redis.sendCommand;
  return () => (redis.sendCommand = send);
}

describe('registration and onboarding, per client address', () => {
  let app: TestApp;
  // One trusted proxy hop (the test client plays it): X-Forwarded-For names the client.
  useTestApp((a) => (app = a), { RATE_LIMIT_REGISTER_PER_HOUR: '3', ONBOARDING_OPEN: 'true', TRUST_PROXY_HOPS: '1' });

  const register = (ip: string) => app.http.post('/api/agents/register').set('X-Forwarded-For', ip).send({ name: uniqueName('rl') });
  const onboard = (ip: string) => app.http.post('/api/onboard').set('X-Forwarded-For', ip).send({ workspace: { name: 'RL' } });

  it('allows the configured number an hour, then 429 with Retry-After; registration and onboarding share the bucket', async () => {
    expect((await register('10.0.0.1')).status).toBe(201);
    expect((await onboard('10.0.0.1')).status).toBe(201);
    expect((await register('10.0.0.1')).status).toBe(201);
    const fourth = await register('10.0.0.1');
    expectLimited(fourth);
    expect(fourth.body.retryAfter).toBeGreaterThan(3000);
    expectLimited(await onboard('10.0.0.1'));
    // Another address is unaffected.
    expect((await register('10.0.0.2')).status).toBe(201);
    // The limiter lives under this instance's prefix: in Redis, or in the queues' Postgres schema.
    if (app.deps.redis) expect(await app.deps.redis.exists(`${app.prefix}:rl:signup:10.0.0.1`)).toBe(1);
    else expect(await app.deps.ds.query(`SELECT key FROM "${queueSchema(app.prefix)}".rate_limits WHERE key = $1`, [`${app.prefix}:rl:signup:10.0.0.1`])).toHaveLength(1);
  });

  it('the waitlist has its own bucket per address', async () => {
    for (let i = 0; i < 3; i++) expect((await app.http.post('/api/waitlist').set('X-Forwarded-For', '10.0.0.9').send({ email: `w${i}@example.com` })).status).toBe(201);
    expectLimited(await app.http.post('/api/waitlist').set('X-Forwarded-For', '10.0.0.9').send({ email: 'w9@example.com' }));
    expect((await register('10.0.0.9')).status).toBe(201);
  });
});

describe('general limit, per key', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_KEY_PER_MINUTE: '5', RATE_LIMIT_PARTICIPANT_PER_MINUTE: '8', TRUST_PROXY_HOPS: '1' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('each key gets the configured number a minute; other keys and the master key are unaffected', async () => {
    // Registration itself is an anonymous request, counted per address: use distinct ones.
    const a = await app.http.post('/api/agents/register').set('X-Forwarded-For', '10.1.0.1').send({ name: uniqueName('k') });
    const b = await app.http.post('/api/agents/register').set('X-Forwarded-For', '10.1.0.2').send({ name: uniqueName('k') });
    for (let i = 0; i < 5; i++) {
      const ok = await app.http.get('/api/agents/me').set('X-Agent-Key', a.body.apiKey);
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-remaining']).toBe(String(4 - i));
    }
    const limited = await app.http.get('/api/agents/me').set('X-Agent-Key', a.body.apiKey);
    expectLimited(limited);
    expect(limited.body.retryAfter).toBeLessThanOrEqual(60);
    expect((await app.http.get('/api/agents/me').set('X-Agent-Key', b.body.apiKey)).status).toBe(200);
    for (let i = 0; i < 7; i++) expect((await app.http.get('/api/agents/me').set('X-API-Key', app.masterKey)).status).toBe(200);
  });

  it('the keys of one participant share its limit: minting keys does not multiply it', async () => {
    const a = await app.http.post('/api/agents/register').set('X-Forwarded-For', '10.1.0.3').send({ name: uniqueName('k') });
    const keys: string[] = [a.body.apiKey];
    for (let i = 0; i < 2; i++) {
      const minted = await app.http.post(`/api/agents/${a.body.agentId ?? a.body.id}/keys`).set('X-Agent-Key', a.body.apiKey).send({ label: `k${i}` });
      expect(minted.status).toBe(201);
      keys.push(minted.body.apiKey);
    }
    // 2 requests were spent minting above (registering is anonymous); 6 more across the three keys reach
    // the participant's 8 while no key is past its own 5.
    for (let i = 0; i < 6; i++) expect((await app.http.get('/api/agents/me').set('X-Agent-Key', keys[i % 3])).status).toBe(200);
    const limited = await app.http.get('/api/agents/me').set('X-Agent-Key', keys[2]);
    expectLimited(limited);
    expect(limited.body.error).toMatch(/per participant/);
  });

  it('anonymous callers are limited per address', async () => {
    for (let i = 0; i < 5; i++) expect((await app.http.get('/api/help?section=groups').set('X-Forwarded-For', '10.2.0.1')).status).toBe(200);
    expectLimited(await app.http.get('/api/help?section=groups').set('X-Forwarded-For', '10.2.0.1'));
    expect((await app.http.get('/api/help?section=groups').set('X-Forwarded-For', '10.2.0.2')).status).toBe(200);
  });
});

describe('X-Forwarded-For without a trusted proxy', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { RATE_LIMIT_REGISTER_PER_HOUR: '2' });

  it('is not believed by default: a caller changing it stays in its own address bucket', async () => {
    expect((await app.http.post('/api/agents/register').set('X-Forwarded-For', '10.3.0.1').send({ name: uniqueName('xff') })).status).toBe(201);
    expect((await app.http.post('/api/agents/register').set('X-Forwarded-For', '10.3.0.2').send({ name: uniqueName('xff') })).status).toBe(201);
    expectLimited(await app.http.post('/api/agents/register').set('X-Forwarded-For', '10.3.0.3').send({ name: uniqueName('xff') }));
  });
});

describe('two API processes, one limit', () => {
  const apps = useTwoProcesses(6);

  it('2N requests of one key split across both: exactly N accepted, then both refuse', async () => {
    const [a, b] = [apps.a(), apps.b()];
    const agent = await registerAgent(a);
    const me = (app: TestApp) => app.http.get('/api/agents/me').set('X-Agent-Key', agent.key);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => me(i % 2 ? b : a)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(6);
    for (const r of answers.filter((x) => x.status !== 200)) expectLimited(r);
    // Spent: refused on both, from memory now, still with the window's Retry-After.
    expectLimited(await me(a));
    expectLimited(await me(b));
  });

});

describe('two API processes, one limit, spent by leases', () => {
  // A limit well above LEASE_SHARE x LEASE_MAX: each process takes points in leases of LEASE_MAX.
  const LIMIT = 300;
  const apps = useTwoProcesses(LIMIT);

  it('never more than the limit across both; at most LEASE_MAX a process left unspent; far fewer store calls than requests', async () => {
    const [a, b] = [apps.a(), apps.b()];
    const agent = await registerAgent(a);
    const me = (app: TestApp) => app.http.get('/api/agents/me').set('X-Agent-Key', agent.key);
    const calls = { n: 0 };
    const count = (name: string) => {
      if (name === 'evalsha' || name === 'eval') calls.n++;
    };
    const undo = [watchRedis(a, count), watchRedis(b, count)];
    let accepted = 0;
    let sent = 0;
    try {
      // Waves of 8 concurrent requests, alternating processes, well past the limit.
      for (let wave = 0; wave < 50; wave++) {
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => me(i % 2 ? b : a)));
        sent += answers.length;
        accepted += answers.filter((r) => r.status === 200).length;
        for (const r of answers.filter((x) => x.status !== 200)) expectLimited(r);
      }
    } finally {
      undo.forEach((u) => u());
    }
    expect(sent).toBe(400);
    expect(accepted).toBeLessThanOrEqual(LIMIT);
    expect(accepted).toBeGreaterThanOrEqual(LIMIT - 2 * LEASE_MAX);
    if (a.deps.redis) expect(calls.n).toBeLessThan(LIMIT / 4);
    // Spent on both.
    expectLimited(await me(a));
    expectLimited(await me(b));
  });
});

describe('Redis on the trade path', () => {
  let a: TestApp;
  useTestApp((x) => (a = x));

  it('trade requests of one key send one command to Redis from the API between them (the rate limit\'s lease); lanes are per batch', async () => {
    if (!a.deps.redis) return; // the Postgres layout has no Redis
    const ws = await buildWorkspace(a, { public: true });
    const who = await trader(a, ws);
    const marketId = await freshBookId(a, ws);
    expect((await trade(a, ws, who, { marketId, direction: 'higher', amount: 1 })).status).toBe(200);
    // The queue's connections are the hub's own; deps.redis is what the API path itself asks.
    const sent: string[] = [];
    const undo = watchRedis(a, (name) => sent.push(name));
    try {
      for (let i = 0; i < LEASE_MAX + 8; i++) expect((await trade(a, ws, who, { marketId, direction: i % 2 ? 'higher' : 'lower', amount: 1 })).status).toBe(200);
    } finally {
      undo();
    }
    // The key's earlier requests told this process how many points are left: it takes them in leases
    // of LEASE_MAX, one call each, and spends them from memory. LEASE_MAX + 8 requests need one or two.
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.length).toBeLessThanOrEqual(2);
    expect(new Set(sent)).toEqual(new Set(['evalsha']));
  });
});
