import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { buildWorkspace } from '../helpers/factories';
import { expectLedgerSound, startTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trade, trader } from '../helpers/markets';
import { PrivateRedis } from '../helpers/services';

/**
 * REDIS_URL=unix:///path/redis.sock: a Redis on the same host reached by its socket (issue 29 step
 * 21). The queues, the lanes and the rate limits all run on it, and no connection goes by TCP.
 */
(process.env.QUEUE_BACKEND === 'postgres' ? describe.skip : describe)('Redis by its unix socket', () => {
  let redis: PrivateRedis;
  let app: TestApp;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    app = await startTestApp({ REDIS_URL: redis.socketUrl });
  });
  afterAll(async () => {
    await expectLedgerSound(app.deps);
    await app.close();
    await redis.stop();
  });

  it('applies trades with every service connection on the socket', async () => {
    expect(app.deps.config.queueBackend).toBe('redis');
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 10_000 });
    const metric = await createMetric(app, ws, { value: 500 });
    const [mk] = await marketsOf(app, ws, metric.id);
    const t = await trader(app, ws, 1000);
    const key = `k-${randomUUID()}`;
    const first = await trade(app, ws, t, { marketId: mk.id, direction: 'higher', amount: 5 }, key);
    expect(first.status).toBe(200);
    const again = await trade(app, ws, t, { marketId: mk.id, direction: 'higher', amount: 5 }, key);
    expect(again.status).toBe(200);
    expect(again.body.tradeId).toBe(first.body.tradeId);
    // Asked by TCP: which clients does this Redis have (this probe aside), and by which way in?
    const probe = new Redis(redis.url);
    try {
      const self = await probe.client('ID');
      const addrs = ((await probe.client('LIST')) as string)
        .trim()
        .split('\n')
        .filter((line) => !line.startsWith(`id=${self} `))
        .map((line) => /\baddr=(\S+)/.exec(line)![1]);
      expect(addrs.filter((a) => a.startsWith(redis.socketPath)).length).toBeGreaterThanOrEqual(2); // the queues' connection and a lane worker's, at least
      expect(addrs.filter((a) => !a.startsWith(redis.socketPath))).toEqual([]);
    } finally {
      probe.disconnect();
    }
  });
});
