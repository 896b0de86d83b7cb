import { PostgresQueueBackend, type PostgresConnection } from 'bullmq';

/**
 * The one place that reaches past BullMQ's public types (the pinned bullmq 6.x Postgres backend):
 * a shared connection's LISTEN client prepared once per client, and a backend that does not own its
 * connection told to LISTEN again after that client is rebuilt (BullMQ wires this only for owners).
 * `test/integration/queueInternals.test.ts` holds these to the pinned version's behaviour on a real
 * Postgres, so an upgrade that renames a private field fails there, not in production.
 */

/** The LISTEN client as the hub uses it (pg's Client). */
export type ListenClient = {
  query(sql: string): Promise<unknown>;
  on(e: 'notification', f: (m: { channel: string; payload?: string }) => void): void;
  off(e: 'notification', f: (m: { channel: string; payload?: string }) => void): void;
  setMaxListeners(n: number): void;
  getMaxListeners(): number;
};

/** A backend's private LISTEN state (postgres-queue-backend.js: ensureListening, waitForJob, readEvents). */
interface ListenState {
  listening: boolean;
  listeningEvents: boolean;
  cancelWait?: () => void;
  cancelEventWait?: () => void;
}

const stateOf = (b: PostgresQueueBackend): ListenState => b as unknown as ListenState;

/** The connection's LISTEN client (typed as the hub uses it). */
export async function listenClientOf(conn: PostgresConnection): Promise<ListenClient> {
  return (await conn.getListenClient()) as unknown as ListenClient;
}

/** Every LISTEN client the connection hands out goes through prepare once (a client is reused until it is rebuilt). */
export function prepareListenClients(conn: PostgresConnection, prepare: (client: ListenClient) => void): void {
  const get = conn.getListenClient.bind(conn);
  const prepared = new WeakSet<object>();
  conn.getListenClient = async () => {
    const client = await get();
    if (!prepared.has(client)) {
      prepared.add(client);
      prepare(client as unknown as ListenClient);
    }
    return client;
  };
}

/** After the shared LISTEN client is rebuilt, the backend LISTENs again and its parked waits end, as an owning backend does. */
export function relistenWhenInvalidated(conn: PostgresConnection, backend: PostgresQueueBackend): void {
  const state = stateOf(backend);
  conn.on('listenerinvalidated', () => {
    state.listening = false;
    state.listeningEvents = false;
    state.cancelWait?.();
    state.cancelEventWait?.();
  });
}

/** Whether the backend has LISTENed for jobs on the current client (for the test of this adapter). */
export function isListeningForJobs(backend: PostgresQueueBackend): boolean {
  return stateOf(backend).listening;
}

/** The channel BullMQ NOTIFYs a queue's name on when it has a job (for the test of this adapter). */
export function jobsChannel(): string {
  return (PostgresQueueBackend as unknown as { NOTIFY_CHANNEL: string }).NOTIFY_CHANNEL;
}
