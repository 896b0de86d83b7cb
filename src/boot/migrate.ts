import { config } from '../config';
import { logger } from '../logger';
import { openDatabase } from '../db/dataSource';
import { ensureLocalServices } from './localServices';

async function main(): Promise<void> {
  const local = await ensureLocalServices(config());
  const ds = await openDatabase(local.config.databaseUrl, { migrate: true, poolSize: 2 });
  await ds.destroy();
  await local.stop();
  logger.info('migrations are up to date');
}

main().catch((err) => {
  logger.fatal({ err }, (err as Error).message);
  process.exit(1);
});
