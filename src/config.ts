import { z } from 'zod';
import { feeBasisPoints, unitsPerCredit } from './domain/credits';
import { TRADE_BATCH_LIMIT } from '../jobs/definitions';
import { parseRedisUrl } from './redisUrl';

const boolish = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no'])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const schema = z.object({
  DATABASE_URL: z.string().url().optional(),
  // Streaming replicas (issue 60): reads that may be a moment old go to one that has replayed past the primary's position.
  DATABASE_REPLICA_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/[^,\s]+(,postgres(ql)?:\/\/[^,\s]+)*$/, 'DATABASE_REPLICA_URL is one or more postgres:// URLs, comma-separated')
    .optional(),
  DATABASE_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(10).max(600_000).default(2000),
  DATABASE_REPLICA_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  // Connections per process: the primary's pool (TypeORM) and each replica's.
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(20),
  DATABASE_REPLICA_POOL_MAX: z.coerce.number().int().min(1).max(1000).default(20),
  REDIS_URL: z
    .string()
    .url()
    .superRefine((url, ctx) => {
      try {
        parseRedisUrl(url);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .optional(),
  // A Redis Cluster's seed nodes: the queues and rate limits run on it (REDIS_URL then only gives the password).
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/, 'REDIS_CLUSTER_NODES is "host:port,host:port,..."')
    .optional(),
  // Where the queues live. Unset: Redis when REDIS_URL is set, otherwise BullMQ's Postgres backend
  // (with nothing configured, Redis too when both default ports answer: the classic dev layout).
  QUEUE_BACKEND: z.enum(['redis', 'postgres']).optional(),
  // Test-only: the "Postgres,Redis" ports probed for services already running (default 5432,6379).
  PROBE_PORTS: z.string().regex(/^\d+,\d+$/, 'PROBE_PORTS is "<postgres port>,<redis port>"').default('5432,6379'),
  // The embedded Postgres' data directory (zero-setup mode).
  EMBEDDED_PG_DIR: z.string().default('.data/pg'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  MASTER_API_KEY: z.string().min(16, 'MASTER_API_KEY must be at least 16 characters').optional(),
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/, 'QUEUE_PREFIX may hold letters, digits, _ and - only').default('mpps'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRADE_LANES: z.coerce.number().int().min(1).max(256).default(2),
  TRADE_WAIT_MS: z.coerce.number().int().min(100).max(60000).default(10000),
  // Per lane and API process: batches enqueued and not yet finished; trades arriving meanwhile wait and go as the next batch.
  TRADE_BATCH_INFLIGHT: z.coerce.number().int().min(1).max(64).default(1),
  TRADE_BATCH_MAX: z.coerce.number().int().min(1).max(TRADE_BATCH_LIMIT).default(64),
  TRADE_BATCH_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(10),
  // A batch whose lanes this API process has nothing else in flight on applies here, at once, not through
  // the lane's queue (issue 66); false sends every batch through the queue (tests of the queue path).
  TRADE_APPLY_AT_ONCE: boolish.default(true),
  // Lanes run one job at a time (global concurrency 1). false is for the fault harness only: it
  // proves the trade transaction alone keeps the money right when a lane runs jobs at once.
  TRADE_LANES_SERIAL: boolish.default(true),
  // A dead worker's lane job is picked up again within about lock + stalled-check interval.
  TRADE_LANE_LOCK_MS: z.coerce.number().int().min(1000).max(600000).default(3000),
  TRADE_LANE_STALLED_CHECK_MS: z.coerce.number().int().min(200).max(600000).default(1000),
  // The watchdog: lane concurrency re-asserted and pending trade requests given a live job again.
  WATCHDOG_INTERVAL_MS: z.coerce.number().int().min(100).max(600000).default(2000),
  TRADE_RECOVERY_AFTER_MS: z.coerce.number().int().min(0).max(3600000).default(2000),
  CREDIT_VALUE_USD: z.coerce.number().positive().default(0.01),
  PUBLIC_BASE_URL: z.string().default('http://localhost:3000'),
  INSTANCE_NAME: z.string().default('Metric-Priced Proposals'),
  ONBOARDING_OPEN: boolish.default(false),
  WAITLIST_URL: z.string().default('https://example.invalid/waitlist'),
  UNCLAIMED_SIGNUP_CREDITS: z.coerce.number().min(0).default(100),
  SIGNUP_CREDITS: z.coerce.number().min(0).default(1000),
  RATE_LIMIT_REGISTER_PER_HOUR: z.coerce.number().int().min(1).default(20),
  RATE_LIMIT_KEY_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  // Every key of one participant together (minting keys does not multiply the limit).
  RATE_LIMIT_PARTICIPANT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  // Proxies in front of the API whose X-Forwarded-For is believed: 0 (default) believes none, and the client address is the socket's.
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  // Bounded costs (issue 26): what an ordinary participant creates for free.
  RATE_LIMIT_PROPOSALS_PER_HOUR: z.coerce.number().int().min(1).default(30),
  // The account system and the connector (issue 55): per client address, requests to /api/auth/* a
  // minute and OAuth client registrations an hour; sign-in attempts per email and per address in a
  // 15-minute window (the brake lives in the shared store, so a restart does not lift it).
  RATE_LIMIT_AUTH_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  RATE_LIMIT_CLIENT_REGISTRATION_PER_HOUR: z.coerce.number().int().min(1).default(20),
  SIGNIN_ATTEMPTS_PER_EMAIL: z.coerce.number().int().min(1).default(10),
  SIGNIN_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
  // How long the connector waits for the person to answer a confirmation before sending nothing.
  MCP_CONFIRM_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
  // Browser origins allowed to call /mcp besides this server's own (comma-separated; absent Origin is a non-browser host).
  MCP_ALLOWED_ORIGINS: z.string().default(''),
  // Where account mail goes (smtp://user:pass@host:port or smtps://...); unset: development logs the link, production disables password reset.
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('no-reply@localhost'),
  FREE_BOOKS_PER_PARTICIPANT: z.coerce.number().int().min(0).default(200),
  SCHEDULER: boolish.default(true),
  // Events and webhooks (issue 13).
  EVENT_RETENTION_DAYS: z.coerce.number().positive().default(30),
  // Agent telemetry (issue 25): heartbeats and decision traces older than this are purged hourly.
  TELEMETRY_RETENTION_DAYS: z.coerce.number().positive().default(30),
  // Sources (issue 25): the repository bridge's REST base (GitHub Enterprise: https://host/api/v3), the key
  // that encrypts repository tokens at rest (any string of 16+ characters; SHA-256 makes the AES key),
  // the largest file it serves, and how long it waits for the repository host.
  GITHUB_API_URL: z.string().url().default('https://api.github.com'),
  SOURCE_TOKEN_KEY: z.string().min(16, 'SOURCE_TOKEN_KEY must be at least 16 characters').optional(),
  // Files the bridge serves; above GitHub's 1 MiB inline limit they come through the blobs API. At most 10 MiB.
  SOURCE_MAX_FILE_BYTES: z.coerce.number().int().min(1).max(10_485_760).default(1_048_576),
  // The repository host may resolve to loopback, private or link-local addresses (a GitHub Enterprise on the LAN, tests).
  SOURCE_ALLOW_PRIVATE: boolish.default(false),
  SOURCE_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  EVENTS_POLL_MS: z.coerce.number().int().min(5).max(10000).default(20),
  // Resolved callers kept in memory, dropped on every change (issue 17); 0 reads Postgres every request.
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3600000).default(60000),
  // The platform-wide totals of GET /marketplace/stats and GET /benchmark (sums over every public
  // workspace) are kept this long per process and answered with their asOf; 0 computes them per request.
  PLATFORM_TOTALS_TTL_MS: z.coerce.number().int().min(0).max(3600000).default(30000),
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(600000).default(15000),
  WEBHOOK_ALLOW_HTTP: boolish.default(false),
  WEBHOOK_ALLOW_PRIVATE: boolish.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(15000),
  // Multiplies the retry schedule (tests run it in milliseconds); Retry-After is honoured as sent.
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
  // An endpoint failing without a success for this long is disabled (5 days).
  WEBHOOK_DISABLE_AFTER_MS: z.coerce.number().int().min(1000).default(432_000_000),
  // Credits and the chain (issue 12). With no CHAIN_RPC_URL/USDC_ADDRESS/TREASURY_PRIVATE_KEY the chain routes refuse (503).
  CHAIN_RPC_URL: z.string().url().optional(),
  CHAIN_ID: z.coerce.number().int().positive().optional(),
  USDC_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'USDC_ADDRESS must be a 0x address').optional(),
  USDC_DECIMALS: z.coerce.number().int().min(0).max(18).default(6),
  TREASURY_PRIVATE_KEY: z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, 'TREASURY_PRIVATE_KEY must be 32 bytes of hex').optional(),
  CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).default(12),
  // A credited deposit is re-checked until this many confirmations; a block gone by then is flagged.
  FINALITY_CONFIRMATIONS: z.coerce.number().int().min(1).max(10000).default(64),
  BUY_FEE_PERCENT: z.coerce.number().min(0).max(100).default(0),
  WITHDRAW_REVIEW_CREDITS: z.coerce.number().min(0).default(10000),
  // Re-check delay of a deposit or withdrawal still waiting on the chain: doubles from the first to the cap.
  CHAIN_RECHECK_MS: z.coerce.number().int().min(10).max(600000).default(2000),
  CHAIN_RECHECK_MAX_MS: z.coerce.number().int().min(10).max(3600000).default(60000),
  // Fault harness only: the withdrawal job throws right after its first broadcast (the retry must not pay twice).
  CHAIN_FAULT_AFTER_BROADCAST: boolish.default(false),
  /** development and test serve the session cookie without Secure (plain http on localhost); anything else sets it. */
  NODE_ENV: z.string().optional(),
  /** Signs session cookies and tokens of the account system (Better Auth); required with NODE_ENV=production. */
  AUTH_SECRET: z.string().min(32, 'AUTH_SECRET must be at least 32 characters').optional(),
  /** Where an instance without AUTH_SECRET keeps the one it generated (default: auth-secret beside EMBEDDED_PG_DIR, so .data/auth-secret). */
  AUTH_SECRET_FILE: z.string().optional(),
});

export type Config = z.infer<typeof schema> & {
  databaseUrl: string;
  /** DATABASE_REPLICA_URL split: none when unset. */
  replicaUrls: string[];
  redisUrl: string;
  explicitServices: boolean;
  queueBackend: 'redis' | 'postgres';
  /** NODE_ENV is development or test: account mail without SMTP_URL is written to the log. */
  development: boolean;
  /** PUBLIC_BASE_URL is https: the session cookie is Secure with the __Secure- prefix; plain http gets a plain cookie. */
  secureCookies: boolean;
  /** The embedded Postgres runs (src/boot/localServices.ts): account mail without SMTP_URL goes to the log. */
  zeroSetup: boolean;
  /** AUTH_SECRET, the tests' fixed one, or '' until boot/authSecret.ts fills in the kept one. */
  authSecret: string;
};

/** Used only by test runs (NODE_ENV=test), which share one database and so one signing key. */
const TEST_AUTH_SECRET = 'test-only-auth-secret-do-not-use-anywhere-else';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/proposals';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Parse the environment once; a bad value stops start-up with one readable line per problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  if (c.CHAIN_RPC_URL) {
    // Deposits and withdrawals convert exactly (src/domain/credits.ts): refuse at start a value they cannot use.
    try {
      unitsPerCredit(c.CREDIT_VALUE_USD, c.USDC_DECIMALS);
      feeBasisPoints(c.BUY_FEE_PERCENT);
    } catch (err) {
      throw new Error(`Invalid configuration:\n  ${(err as Error).message}`);
    }
  }
  if (!c.AUTH_SECRET && c.NODE_ENV === 'production') {
    throw new Error('AUTH_SECRET is not set: with NODE_ENV=production set it to 32 or more random characters (openssl rand -base64 32) and keep it across restarts.');
  }
  const development = c.NODE_ENV === 'development' || c.NODE_ENV === 'test';
  return {
    ...c,
    development,
    secureCookies: /^https:/i.test(c.PUBLIC_BASE_URL),
    zeroSetup: false,
    // Elsewhere a missing secret is generated once and kept (src/boot/authSecret.ts).
    authSecret: c.AUTH_SECRET ?? (c.NODE_ENV === 'test' ? TEST_AUTH_SECRET : ''),
    databaseUrl: c.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    replicaUrls: c.DATABASE_REPLICA_URL ? c.DATABASE_REPLICA_URL.split(',') : [],
    redisUrl: c.REDIS_URL ?? DEFAULT_REDIS_URL,
    explicitServices: Boolean(c.DATABASE_URL || c.REDIS_URL || c.REDIS_CLUSTER_NODES),
    queueBackend: c.QUEUE_BACKEND ?? (c.REDIS_URL || c.REDIS_CLUSTER_NODES ? 'redis' : 'postgres'),
  };
}

let current: Config | undefined;
export function config(): Config {
  current ??= loadConfig();
  return current;
}
/** Tests and the private-services bootstrap replace the config after changing the environment. */
export function setConfig(c: Config): void {
  current = c;
}
