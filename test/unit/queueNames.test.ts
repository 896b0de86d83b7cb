import fc from 'fast-check';
import { clusterSeeds, JobHub, redisConnection } from '../../jobs/hub';
import { redact } from '../../src/boot/localServices';
import { loadConfig } from '../../src/config';

/** Redis Cluster's key slot: CRC16 (XMODEM) of the hash tag (the first non-empty `{...}`), else of the key, mod 16384. */
function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

const redisHub = (lanes: number) => new JobHub({ backend: { kind: 'redis', url: 'redis://127.0.0.1:6379' }, prefix: 'mpps', lanes });

describe('queue names on Redis carry a Redis Cluster hash tag', () => {
  it('computes the slots Redis does (CLUSTER KEYSLOT)', () => {
    // Values from the Redis Cluster specification and redis-cli CLUSTER KEYSLOT.
    expect(keySlot('123456789')).toBe(12739);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
  });

  it("every key of one queue (BullMQ's <prefix>:<name>:<suffix> and its jobs) hashes to one slot", () => {
    const hub = redisHub(16);
    fc.assert(
      fc.property(fc.constantFrom(...hub.allQueueNames()), fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes('{')), (name, suffix) => {
        expect(keySlot(`mpps:${name}:${suffix}`)).toBe(keySlot(`mpps:${name}:wait`));
      }),
    );
  });

  it('lanes of a market id map to tagged names, each lane its own slot', () => {
    const hub = redisHub(16);
    const lanes = hub.queueNames('trade');
    expect(lanes[3]).toBe('trade-{3}');
    expect(hub.queueFor('chain')).toBe('{chain}');
    expect(new Set(lanes.map((q) => keySlot(`mpps:${q}:wait`))).size).toBe(16);
    // With three masters splitting the slots evenly, 16 lanes land on all three.
    const node = (slot: number) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2);
    expect(new Set(lanes.map((q) => node(keySlot(`mpps:${q}:wait`)))).size).toBe(3);
  });

  it('keeps the untagged names on the Postgres backend, whose queued jobs keep their queues', () => {
    const hub = new JobHub({ backend: { kind: 'postgres', url: 'postgres://127.0.0.1/x' }, prefix: 'mpps', lanes: 4 });
    expect(hub.queueNames('trade')).toEqual(['trade-0', 'trade-1', 'trade-2', 'trade-3']);
    expect(hub.queueFor('chain')).toBe('chain');
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('parses seed nodes and puts the queues on Redis', () => {
    expect(clusterSeeds('127.0.0.1:7101,redis-b:7102')).toEqual([
      { host: '127.0.0.1', port: 7101 },
      { host: 'redis-b', port: 7102 },
    ]);
    const c = loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7101,127.0.0.1:7102' });
    expect(c.queueBackend).toBe('redis');
    expect(c.explicitServices).toBe(true);
  });

  it('refuses a malformed list with one sentence naming the variable', () => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES is "host:port,host:port,\.\.\."/);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:1,,b:2' })).toThrow(/REDIS_CLUSTER_NODES/);
  });
});

describe('REDIS_URL', () => {
  it('reaches Redis by TCP or, with unix://, by its socket on this host', () => {
    expect(redisConnection('redis://:p%40ss@redis-a:7000/3')).toMatchObject({ host: 'redis-a', port: 7000, password: 'p@ss', db: 3 });
    expect(redisConnection('redis://127.0.0.1')).toMatchObject({ host: '127.0.0.1', port: 6379, db: 0 });
    const socket = redisConnection('unix:///run/redis/redis.sock?db=2&password=s%26cret');
    expect(socket).toMatchObject({ path: '/run/redis/redis.sock', password: 's&cret', db: 2 });
    expect(socket).not.toHaveProperty('host');
    expect(redisConnection('unix:///tmp/r.sock')).toMatchObject({ path: '/tmp/r.sock', db: 0 });
    expect(loadConfig({ REDIS_URL: 'unix:///tmp/r.sock' }).queueBackend).toBe('redis');
  });

  it('refuses, at start-up and in one sentence, a URL that would reach the wrong database', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/abc' })).toThrow(/REDIS_URL: the database is a whole number.*"abc"/);
    expect(() => loadConfig({ REDIS_URL: 'unix:///tmp/r.sock?db=x' })).toThrow(/REDIS_URL: the database is a whole number/);
    expect(() => loadConfig({ REDIS_URL: 'unix://tmp/r.sock' })).toThrow(/three slashes.*"tmp" was read as a host/);
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' })).toThrow(/"http:" is not supported/);
    expect(redisConnection('unix://localhost/tmp/r.sock')).toMatchObject({ path: '/tmp/r.sock' });
  });

  it('logs no password, in the URL\'s credentials or in its query', () => {
    expect(redact('unix:///run/redis.sock?db=2&password=s3cret')).toBe('unix:///run/redis.sock?db=2&password=***');
    expect(redact('redis://:s3cret@redis-a:7000/3')).toBe('redis://:***@redis-a:7000/3');
    expect(redact('postgres://app:s3cret@localhost/db?host=/var/run/postgresql')).not.toContain('s3cret');
  });
});
