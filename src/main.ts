import type { Server } from 'node:http';
import { startWorkers, type WorkerSet } from '../workers';
import { createApp } from './api/app';
import { config, setConfig } from './config';
import { ensureLocalServices } from './db/localServices';
import { logger } from './logger';
import { bootDeps, closeDeps } from './runtime';
import { startScheduler } from './scheduler';
import { ensurePlatform } from './services/identity';

type Role = 'all' | 'api' | 'worker';

async function main(): Promise<void> {
  const roleArg = process.argv.find((a) => a.startsWith('--role='))?.slice(7) ?? 'all';
  if (!['all', 'api', 'worker'].includes(roleArg)) throw new Error(`Unknown role "${roleArg}": use --role=api, --role=worker or nothing for all-in-one.`);
  const role = roleArg as Role;
  const local = await ensureLocalServices(config());
  const cfg = local.config;
  setConfig(cfg);
  const deps = await bootDeps(cfg, { migrate: true });
  await ensurePlatform(deps.ds, cfg.MASTER_API_KEY);

  let server: Server | undefined;
  let workers: WorkerSet | undefined;
  let scheduler: { stop(): void } | undefined;
  if (role !== 'api') {
    workers = await startWorkers(deps);
    if (cfg.SCHEDULER) scheduler = startScheduler(deps);
  }
  if (role !== 'worker') {
    const app = createApp(deps);
    server = app.listen(cfg.PORT);
    await new Promise<void>((r) => server!.once('listening', () => r()));
  }
  logger.info({ role, port: server ? cfg.PORT : undefined, queuePrefix: cfg.QUEUE_PREFIX }, 'started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const deadline = setTimeout(() => {
      logger.error('drain took over 10 s; exiting');
      process.exit(1);
    }, 10_000);
    deadline.unref();
    scheduler?.stop();
    // Stop taking requests, let running jobs finish, then close Redis and Postgres (stopping an embedded one).
    await Promise.all([
      server ? new Promise<void>((r) => server!.close(() => r())) : Promise.resolve(),
      workers?.close(),
    ]);
    server?.closeAllConnections?.();
    await closeDeps(deps);
    await local.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: Error) => {
  logger.fatal({ err }, err.message);
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
