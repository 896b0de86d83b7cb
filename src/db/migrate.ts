import { config } from '../config';
import { logger } from '../logger';
import { openDatabase } from './dataSource';
import { ensureLocalServices } from './localServices';

async function main(): Promise<void> {
  await ensureLocalServices(config());
  const ds = await openDatabase(config().databaseUrl, { migrate: true, poolSize: 2 });
  await ds.destroy();
  logger.info('migrations are up to date');
}

main().catch((err) => {
  logger.fatal({ err }, (err as Error).message);
  process.exit(1);
});
