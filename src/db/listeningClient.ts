import { Client } from 'pg';
import { logger } from '../logger';

/**
 * A pg client that always has an error listener, for every pool of the process (TypeORM's, the
 * queue's, the account system's). pg-pool takes its own listener off a client it hands out, so a
 * backend terminated while the client is checked out between two statements (a migration's, a
 * transaction's) emits 'error' with no listener, and Node ends the process. So does a second
 * 'error' (the socket's end) after the pool has let go. The statement in flight still fails, and the
 * pool still drops the client.
 *
 * A FATAL answer (the backend terminated, the server shutting down) means the server closes this
 * connection, but its socket may close a while later on a busy machine. The client ends itself at
 * once, so the pool drops it on release (pg-pool drops an ending client) instead of handing the dead
 * connection to the next request, which would fail too (a retried 503 answering 503 again).
 */
export class ListeningClient extends Client {
  constructor(config?: ConstructorParameters<typeof Client>[0]) {
    super(config);
    this.on('error', (err) => logger.debug({ err }, 'postgres client error'));
    let connected = false;
    this.once('connect', () => (connected = true));
    // Registered before the client's own listener (connect() adds it), so the client is ending before
    // the failed statement's caller sees the error and releases it.
    this.connection.on('errorMessage', (msg: { severity?: string }) => {
      if (connected && (msg.severity === 'FATAL' || msg.severity === 'PANIC')) this.end().catch(() => undefined);
    });
  }
}
