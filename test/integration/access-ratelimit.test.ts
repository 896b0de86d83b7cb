import { queueSchema } from '../../jobs/definitions';
import { startTestApp, useTestApp, uniqueName, type TestApp } from '../helpers/harness';

/** Rate limits (spec §4.2, §8) on Redis or Postgres, lowered through the test app's configuration. */

function expectLimited(res: { status: number; body: any; headers: Record<string, string> }): void {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: 'rate_limited', error: expect.any(String), retryAfter: expect.any(Number), limit: expect.any(Number) });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(res.headers['retry-after'])).toBe(res.body.retryAfter);
}

describe('registration and onboarding, per client address', () => {
  let app: TestApp;
  useTestApp((a) => (app = a), { RATE_LIMIT_REGISTER_PER_HOUR: '3', ONBOARDING_OPEN: 'true' });

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
    app = await startTestApp({ RATE_LIMIT_KEY_PER_MINUTE: '5' });
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

  it('anonymous callers are limited per address', async () => {
    for (let i = 0; i < 5; i++) expect((await app.http.get('/api/help?section=groups').set('X-Forwarded-For', '10.2.0.1')).status).toBe(200);
    expectLimited(await app.http.get('/api/help?section=groups').set('X-Forwarded-For', '10.2.0.1'));
    expect((await app.http.get('/api/help?section=groups').set('X-Forwarded-For', '10.2.0.2')).status).toBe(200);
  });
});
