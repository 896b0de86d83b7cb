import { loadConfig } from '../../src/config';
import { connectionBudget, overBudget } from '../../src/db/connections';

describe('connection budget', () => {
  it("counts the pool (the account system's too), the LISTEN client, the Postgres queues and the replica probes", () => {
    const redis = connectionBudget(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_POOL_MAX: '7' }));
    expect(redis.primary).toEqual({ pool: 7, listen: 1, queue: 0, replicaProbe: 0 });
    expect(redis.primaryTotal).toBe(8);
    expect(redis.perReplica).toBe(0);
    const pgQueues = connectionBudget(
      loadConfig({ DATABASE_URL: 'postgres://p@h/db', DATABASE_REPLICA_URL: 'postgres://r1/db,postgres://r2/db', DATABASE_REPLICA_POOL_MAX: '5', QUEUE_BACKEND: 'postgres' }),
    );
    expect(pgQueues.primary).toEqual({ pool: 20, listen: 1, queue: 13, replicaProbe: 1 });
    expect(pgQueues.primaryTotal).toBe(35);
    expect(pgQueues.perReplica).toBe(6);
  });

  it('says in one sentence when a start would not fit in max_connections beside what is open', () => {
    expect(overBudget('the primary', { max: 100, reserved: 3, open: 50 }, 47)).toBeNull();
    const said = overBudget('the primary', { max: 100, reserved: 3, open: 50 }, 48);
    expect(said).toMatch(/^This process may open 48 connections to the primary, which already has 50 open of max_connections 100 \(3 reserved for superusers\)/);
    expect(said!.split('. ').length).toBe(1);
  });

  it('refuses a DATABASE_REPLICA_URL that is not a list of postgres URLs', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'postgres://a/db, postgres://b/db' })).toThrow(/DATABASE_REPLICA_URL/);
    expect(loadConfig({ DATABASE_REPLICA_URL: 'postgres://a/db,postgresql://b:5433/db' }).replicaUrls).toEqual(['postgres://a/db', 'postgresql://b:5433/db']);
  });
});
