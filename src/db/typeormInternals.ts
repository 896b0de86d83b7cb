import type { DataSource, QueryRunner, ReplicationMode } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';

/**
 * The one place that reaches past TypeORM's public types (the pinned typeorm 0.3.x Postgres driver):
 * a query runner's connection fields and the driver's runner factory, which the replica router
 * (db/replicas.ts) needs to hand a runner a replica's connection. `test/integration/ormInternals.test.ts`
 * holds these fields to the pinned version's behaviour, so an upgrade that renames or re-purposes
 * one fails there, not in production.
 */
interface RunnerFields {
  /** The pg client the runner holds (set by connect(), cleared by nothing: release only flags). */
  databaseConnection: unknown;
  /** connect() in flight: a second connect() returns it. */
  databaseConnectionPromise: Promise<unknown> | undefined;
  /** Returns the client to its pool; release() calls it once. */
  releaseCallback?: (err?: unknown) => void;
}

const fields = (r: PostgresQueryRunner): RunnerFields => r as unknown as RunnerFields;

/** The runner holds a connection or is getting one: connect() would return that one. */
export function runnerConnecting(r: PostgresQueryRunner): boolean {
  const f = fields(r);
  return !!f.databaseConnection || !!f.databaseConnectionPromise;
}

/** Mark connect() in flight (or not): a concurrent connect() waits for this one. */
export function setRunnerConnecting(r: PostgresQueryRunner, connecting: Promise<unknown> | undefined): void {
  fields(r).databaseConnectionPromise = connecting;
}

/** Give the runner a client of another pool: its statements run there until it lets go. */
export function adoptClient(r: PostgresQueryRunner, client: unknown, release: (err?: unknown) => void): void {
  const f = fields(r);
  r.driver.connectedQueryRunners.push(r as unknown as QueryRunner);
  f.databaseConnection = client;
  f.releaseCallback = release;
}

/** Let go of the adopted client (released with err, if any): the runner's next connect() is TypeORM's own. */
export function dropClient(r: PostgresQueryRunner, err?: unknown): void {
  const f = fields(r);
  const release = f.releaseCallback;
  f.releaseCallback = undefined;
  release?.(err);
  const i = r.driver.connectedQueryRunners.indexOf(r as unknown as QueryRunner);
  if (i >= 0) r.driver.connectedQueryRunners.splice(i, 1);
  f.databaseConnection = undefined;
  f.databaseConnectionPromise = undefined;
}

/** The client the runner holds now, if any. */
export function heldClient(r: PostgresQueryRunner): unknown {
  return fields(r).databaseConnection;
}

/** Route every new query runner of ds through make (which may return TypeORM's own, `plain(mode)`). */
export function routeQueryRunners(
  ds: DataSource,
  make: (plain: (mode: ReplicationMode) => PostgresQueryRunner, mode: ReplicationMode, driver: PostgresDriver) => PostgresQueryRunner,
): void {
  const driver = ds.driver as PostgresDriver;
  const plain = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode: ReplicationMode) => make(plain, mode, driver);
}
