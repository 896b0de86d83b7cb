import { Client } from 'pg';

/**
 * Counts the round trips this process's Postgres clients make: each statement, except that a
 * pipelined burst (statements a client in pipeline mode is given in one go) counts once. With
 * `only`, the clients of connections opened with that application_name alone (the app's own
 * background work, its event pump among it, runs on other connections meanwhile).
 * `restore()` puts node-postgres back as it was.
 */
export function countRoundTrips(only?: string): { readonly trips: number; reset(): void; restore(): void } {
  let trips = 0;
  const bursting = new WeakSet<Client>();
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  Client.prototype.query = function (this: Client & { pipeline?: boolean; connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
    if (only !== undefined && this.connectionParameters?.application_name !== only) return query.apply(this, args);
    if (!this.pipeline || !bursting.has(this)) trips++;
    if (this.pipeline && !bursting.has(this)) {
      bursting.add(this);
      queueMicrotask(() => bursting.delete(this));
    }
    return query.apply(this, args);
  } as typeof Client.prototype.query;
  return {
    get trips() {
      return trips;
    },
    reset: () => void (trips = 0),
    restore: () => void (Client.prototype.query = query as typeof Client.prototype.query),
  };
}
