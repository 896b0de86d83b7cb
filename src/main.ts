// First: V8 flags that must hold before any of the service's modules compile.
import './boot/heapFlags';
import { startWorkers, type WorkerSet } from '../workers';
import { createApp } from './doors';
import { bindHttp, StartupError, type BoundHttp } from './boot/listen';
import { ensureLocalServices, type LocalServices } from './boot/localServices';
import { startAgainOnLostConnection } from './boot/startAgain';
import { config, setConfig } from './config';
import type { Deps } from './deps';
import { logger } from './logger';
import { bootDeps, closeDeps } from './runtime';
import { startScheduler } from './scheduler';
import { ensurePlatform, newKeyValue } from './services/identity';

type Role = 'all' | 'api' | 'worker';

/** What has started so far: stopParts() stops whatever is there. */
const parts: { http?: BoundHttp; local?: LocalServices; deps?: Deps; workers?: WorkerSet; scheduler?: { stop(): void } } = {};

async function stopParts(): Promise<void> {
  // Stop taking requests, let running jobs finish, then close Redis and Postgres (stopping an embedded one).
  const server = parts.http?.server;
  await Promise.all([server?.listening ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve(), stopWorkers()]);
  server?.closeAllConnections?.();
  await stopServices();
  await parts.local?.stop();
}

async function stopWorkers(): Promise<void> {
  parts.scheduler?.stop();
  const workers = parts.workers;
  parts.scheduler = parts.workers = undefined;
  await workers?.close();
}

/** The workers, the scheduler, Redis and Postgres: what a start that lost a connection undoes before it starts again. */
async function stopServices(): Promise<void> {
  try {
    await stopWorkers();
  } finally {
    const deps = parts.deps;
    parts.deps = undefined;
    if (deps) await closeDeps(deps);
  }
}

let booted = false;
let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'draining');
  const deadline = setTimeout(() => {
    logger.error('drain took over 10 s; exiting');
    process.exit(1);
  }, 10_000);
  deadline.unref();
  try {
    await stopParts();
  } catch (err) {
    // Said, not left to an unhandled rejection: the operator (and a test) sees which part failed to close.
    logger.error({ err }, 'stopping failed');
    process.exit(1);
  }
  logger.info('stopped');
  process.exit(0);
}

/** A signal during boot waits for the boot to finish (or fail), then stops what started: nothing is left running. */
let signalDuringBoot: string | undefined;
const onSignal = (signal: string) => {
  if (booted) return void shutdown(signal);
  if (signalDuringBoot) return;
  signalDuringBoot = signal;
  logger.info({ signal }, 'stopping once the start in progress finishes');
  setTimeout(() => {
    logger.error('the start did not finish within 30 s of the signal; exiting');
    process.exit(1);
  }, 30_000).unref();
};
process.on('SIGTERM', () => onSignal('SIGTERM'));
process.on('SIGINT', () => onSignal('SIGINT'));

async function main(): Promise<void> {
  const roleArg = process.argv.find((a) => a.startsWith('--role='))?.slice(7) ?? 'all';
  if (!['all', 'api', 'worker'].includes(roleArg)) throw new StartupError(`Unknown role "${roleArg}": use --role=api, --role=worker or nothing for all-in-one.`);
  const role = roleArg as Role;
  try {
    config();
  } catch (err) {
    throw new StartupError((err as Error).message);
  }
  // The port first: a clash stops the start before the database starts or a master key is generated.
  if (role !== 'worker') parts.http = await bindHttp(config().PORT);
  parts.local = await ensureLocalServices(config());
  const cfg = parts.local.config;
  setConfig(cfg);
  // One key per process to generate (when MASTER_API_KEY is not set), whichever attempt commits it.
  const generatedKey = newKeyValue();
  const deps = await startAgainOnLostConnection(
    async () => {
      const d = (parts.deps = await bootDeps(cfg, { migrate: true }));
      await ensurePlatform(d.ds, cfg.MASTER_API_KEY, generatedKey);
      if (role !== 'api') {
        parts.workers = await startWorkers(d);
        if (cfg.SCHEDULER) parts.scheduler = startScheduler(d);
      }
      return d;
    },
    () => stopServices().catch((err: Error) => logger.warn({ err }, 'undoing a start that lost a connection')),
    {
      onRetry: (err, attempt, waitMs) => logger.warn({ err, attempt, waitMs }, `the start lost a connection (${(err as Error).message}); starting again`),
      stopping: () => signalDuringBoot !== undefined,
    },
  );
  parts.http?.attach(createApp(deps).callback());
  booted = true;
  logger.info({ role, port: parts.http ? cfg.PORT : undefined, queuePrefix: cfg.QUEUE_PREFIX }, 'started');
  if (signalDuringBoot) await shutdown(signalDuringBoot);
}

main().catch(async (err: Error) => {
  // An operator's mistake is one sentence; anything else keeps its stack in the log.
  if (err instanceof StartupError) logger.fatal(err.message);
  else logger.fatal({ err }, err.message);
  process.stderr.write(`${err.message}\n`);
  if (!booted) parts.http?.refuse();
  await stopParts().catch((e: Error) => logger.error({ err: e }, 'stopping after a failed start'));
  process.exit(1);
});
