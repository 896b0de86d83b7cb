import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import request from 'supertest';
import { createApp } from '../../src/doors';
import { loadConfig } from '../../src/config';
import { keepAuthSecret } from '../../src/boot/authSecret';
import { ManualClock, type Deps } from '../../src/deps';
import { queueSchema } from '../../jobs/definitions';
import { bootDeps, closeDeps } from '../../src/runtime';
import { ensurePlatform } from '../../src/services/identity';
import { sequenceEvents } from '../../src/services/events';
import { checkLedgerInvariant } from '../../src/services/ledger';
import { startWorkers, type WorkerSet } from '../../workers';
import { ContractRecorder } from './contract';
import { waitFor } from './services';

export interface TestApp {
  deps: Deps;
  clock: ManualClock;
  http: ReturnType<typeof request.agent>;
  server: Server;
  masterKey: string;
  prefix: string;
  /** In-process workers (undefined when started with workers: false and not started since). */
  readonly workers: WorkerSet | undefined;
  /** Answers that broke the OpenAPI contract since the last call (the harness fails the test on any). */
  contractViolations(): string[];
  startWorkers(): Promise<WorkerSet>;
  close(): Promise<void>;
}

/**
 * The real app on a real port, real workers, a queue prefix of its own. The database is migrated
 * already (test/helpers/globalSetup.ts) unless `migrate` (a bench's own database).
 */
export async function startTestApp(env: Record<string, string> = {}, opts: { workers?: boolean; migrate?: boolean; port?: number } = {}): Promise<TestApp> {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const masterKey = `master-${randomBytes(12).toString('hex')}`;
  // Rate limits are high by default so suites that register many participants from one address
  // are not throttled; a suite testing the limits lowers them through `env`.
  // As main does (src/boot/localServices.ts): AUTH_SECRET, the test runs' fixed one, or one generated once and kept.
  const config = keepAuthSecret(loadConfig({
    ...process.env,
    QUEUE_PREFIX: prefix,
    MASTER_API_KEY: masterKey,
    TRADE_LANES: '4',
    SCHEDULER: 'false',
    RATE_LIMIT_REGISTER_PER_HOUR: '100000',
    RATE_LIMIT_KEY_PER_MINUTE: '100000',
    RATE_LIMIT_PARTICIPANT_PER_MINUTE: '100000',
    RATE_LIMIT_PROPOSALS_PER_HOUR: '100000',
    RATE_LIMIT_AUTH_PER_MINUTE: '100000',
    RATE_LIMIT_CLIENT_REGISTRATION_PER_HOUR: '100000',
    SIGNIN_ATTEMPTS_PER_EMAIL: '100000',
    SIGNIN_ATTEMPTS_PER_ADDRESS: '100000',
    // Suites share one database: no suite recovers another's in-flight requests unless it asks to.
    WATCHDOG_INTERVAL_MS: '600000',
    TRADE_RECOVERY_AFTER_MS: '600000',
    // Suites read platform-wide figures right after changing them; the one that tests keeping them raises it.
    PLATFORM_TOTALS_TTL_MS: '0',
    ...env,
  })).config;
  const clock = new ManualClock();
  const deps = await bootDeps(config, { migrate: opts.migrate ?? false, clock, poolSize: 10 });
  await ensurePlatform(deps.ds, masterKey);
  let workers: WorkerSet | undefined = opts.workers === false ? undefined : await startWorkers(deps);
  const contract = new ContractRecorder();
  // `port`: the same address again (a restart test: issuer and token audience name it).
  const server = createApp(deps, { onResponse: contract.observe }).listen(opts.port ?? 0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  // PUBLIC_BASE_URL 'listening': the address this server got (OAuth issuer, resource and redirects must match it).
  if (env.PUBLIC_BASE_URL === 'listening') Object.assign(deps.config, { PUBLIC_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  const http = request.agent(server);
  return {
    deps,
    clock,
    http,
    server,
    masterKey,
    prefix,
    get workers() {
      return workers;
    },
    contractViolations: () => contract.take(),
    startWorkers: async () => {
      workers ??= await startWorkers(deps);
      return workers;
    },
    close: async () => {
      // Long-lived answers (SSE streams of MCP sessions, the event stream) would hold close() open.
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await workers?.close();
      await deps.hub.close();
      await dropQueueData(deps, prefix);
      await closeDeps(deps);
      const broken = contract.take();
      if (broken.length) throw new Error(`Responses broke the OpenAPI contract:\n${broken.join('\n')}`);
    },
  };
}

/** Remove every queue, job and counter under `prefix` (Redis keys, or the Postgres queue schema). */
export async function dropQueueData(deps: Deps, prefix: string): Promise<void> {
  if (deps.redis) {
    const keys = await deps.redis.keys(`${prefix}:*`);
    if (keys.length) await deps.redis.del(...keys);
  } else {
    await deps.ds.query(`DROP SCHEMA IF EXISTS "${queueSchema(prefix)}" CASCADE`);
  }
}

export async function expectLedgerSound(deps: Deps): Promise<void> {
  const report = await checkLedgerInvariant(deps.ds);
  expect({ ...report, total: report.total.toString() }).toEqual({
    ok: true,
    total: '0',
    mismatchedAccounts: [],
    unbalancedTransfers: 0,
    negativeParticipants: [],
  });
}

/**
 * Sequence until every outbox row of the workspace has its place in the log. One pass is not
 * enough: it finds the lock taken while another pass (this app's pump, or another suite's on the
 * shared database) runs, and that pass's snapshot may predate the rows.
 */
export async function sequenceWorkspace(deps: Deps, workspaceId: string): Promise<void> {
  await waitFor(`every outbox row of ${workspaceId} sequenced`, async () => {
    await sequenceEvents(deps);
    const [{ left }] = await deps.ds.query(`SELECT count(*)::int AS left FROM outbox WHERE workspace_id = $1 AND seq IS NULL`, [workspaceId]);
    return left === 0;
  });
}

/** Test-only advisory lock key (suites share one database; see outboxNumbersHeld). */
const OUTBOX_NUMBERS_LOCK = 727399;

/**
 * Suites share one database. A test that deletes numbered outbox rows runs `fn` as a 'delete' (many
 * at once); a test that counts every number the sequencer gave between two heads runs it as the
 * 'count' (alone): a deletion in its window would read as a number used twice. A session-level
 * advisory lock on a connection of its own, released when the connection ends.
 */
export async function outboxNumbersHeld<T>(deps: Deps, as: 'delete' | 'count', fn: () => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: deps.config.databaseUrl });
  await client.connect();
  try {
    await client.query(as === 'delete' ? 'SELECT pg_advisory_lock_shared($1)' : 'SELECT pg_advisory_lock($1)', [OUTBOX_NUMBERS_LOCK]);
    return await fn();
  } finally {
    await client.end();
  }
}

let seq = 0;
export function uniqueName(prefix = 'agent'): string {
  seq += 1;
  return `${prefix}-${randomBytes(3).toString('hex')}${seq}`;
}

/**
 * Start the real app before this file's (or describe block's) tests and stop it after them,
 * checking the ledger invariant on the way out. `assign` hands the app to the file's variable.
 */
export function useTestApp(assign: (app: TestApp) => void, env: Record<string, string> = {}, opts: { workers?: boolean } = {}): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(env, opts);
    assign(app);
  });
  afterEach(() => {
    // Every answer of the test matched the OpenAPI document (see helpers/contract.ts).
    expect(app?.contractViolations() ?? []).toEqual([]);
  });
  afterAll(async () => {
    if (!app) return;
    await expectLedgerSound(app.deps);
    await app.close();
  });
}
