/** Where a REDIS_URL points: a host and port, or a unix socket on this host, with the password and database. */
export type RedisAddress = ({ host: string; port: number } | { path: string }) & { password?: string; db: number };

/**
 * `redis://[:password@]host[:port][/db]`, or `unix:///path/to/redis.sock[?db=N&password=...]` for a
 * Redis on the same host (each round trip then skips the TCP stack). Throws one sentence naming
 * what is wrong: a URL that parses but means nothing would otherwise reach the wrong database.
 */
export function parseRedisUrl(url: string): RedisAddress {
  const u = new URL(url);
  if (u.protocol === 'unix:') {
    if (u.hostname && u.hostname !== 'localhost') throw new Error(`REDIS_URL: a socket is unix:///path/to/redis.sock (three slashes); "${u.hostname}" was read as a host`);
    const password = u.searchParams.get('password') || undefined;
    return { path: decodeURIComponent(u.pathname), password, db: database(u.searchParams.get('db') ?? '0') };
  }
  if (u.protocol !== 'redis:') throw new Error(`REDIS_URL: "${u.protocol}" is not supported; use redis:// or unix://`);
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  return { host: u.hostname, port: Number(u.port || 6379), password, db: database(u.pathname.slice(1) || '0') };
}

function database(text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`REDIS_URL: the database is a whole number (redis://host:6379/2 or unix:///path?db=2), not "${text}"`);
  return Number(text);
}
