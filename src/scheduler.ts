import cron from 'node-cron';
import { cronTable } from '../jobs/cron';
import type { Deps } from './deps';
import { logger } from './logger';

export function startScheduler(deps: Deps): { stop(): void } {
  const tasks = cronTable.map((entry) =>
    cron.schedule(entry.schedule, () => {
      entry.fire(deps.hub, new Date()).catch((err: Error) => logger.warn({ cron: entry.name, err: err.message }, 'scheduled enqueue failed'));
    }),
  );
  return {
    stop: () => {
      for (const t of tasks) void t.stop();
    },
  };
}
