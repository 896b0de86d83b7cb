import { Client } from 'pg';
import { logger } from '../logger';

/**
 * A pg client that always has an error listener, for every pool of the process (TypeORM's, the
 * queue's, the account system's). pg-pool takes its own listener off a client it hands out, so a
 * backend terminated while the client is checked out between two statements (a migration's, a
 * transaction's) emits 'error' with no listener, and Node ends the process. So does a second
 * 'error' (the socket's end) after the pool has let go. The statement in flight still fails, and the
 * pool still drops the client.
 */
export class ListeningClient extends Client {
  constructor(config?: ConstructorParameters<typeof Client>[0]) {
    super(config);
    this.on('error', (err) => logger.debug({ err }, 'postgres client error'));
  }
}
