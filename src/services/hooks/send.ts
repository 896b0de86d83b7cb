import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Where a webhook may not go (unless WEBHOOK_ALLOW_PRIVATE): loopback, private, link-local (metadata), multicast, reserved. */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  blocked.addSubnet(net, bits, 'ipv6');

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries. */
export function addressRefused(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface SendPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  timeoutMs: number;
}

/** Why a URL can never be an endpoint (checked when a hook is saved); null when it may be. */
export function urlProblem(raw: string, policy: Pick<SendPolicy, 'allowHttp' | 'allowPrivate'>): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && policy.allowHttp)) return policy.allowHttp ? 'must be http or https' : 'must be https';
  if (u.username || u.password) return 'must not carry credentials';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && (isIP(host) ? addressRefused(host) : host === 'localhost' || host.endsWith('.localhost'))) {
    return 'points at a loopback, private, link-local or multicast address';
  }
  return null;
}

/**
 * Resolve a URL's host once, refuse it when any address is loopback, private, link-local or multicast
 * (unless allowPrivate), and give a lookup that pins the connection to the checked address (a DNS
 * answer that changes between check and connect cannot move it). Shared by webhooks and the
 * repository bridge.
 */
export async function pinnedLookup(u: URL, allowPrivate: boolean): Promise<{ lookup: LookupFunction; address: string } | { error: string; refused: boolean }> {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let address: string;
  let family: number;
  try {
    const found = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
    const refused = found.filter((a) => addressRefused(a.address));
    if (!allowPrivate && refused.length) {
      return { error: `Refused: ${host} resolves to ${refused[0].address}, a loopback, private, link-local or multicast address.`, refused: true };
    }
    ({ address, family } = found[0]);
  } catch (err) {
    return { error: `DNS lookup of ${host} failed: ${(err as Error).message}`, refused: false };
  }
  const pinned: LookupFunction = (_name, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  return { lookup: pinned, address };
}

export interface SendResult {
  /** null: no HTTP answer (refused address, DNS failure, timeout, connection error). */
  status: number | null;
  retryAfter: string | null;
  /** At most 1 KB of the answer's body. */
  snippet: string;
  error: string | null;
  latencyMs: number;
}

const SNIPPET_BYTES = 1024;
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 8 }), https: new https.Agent({ keepAlive: true, maxSockets: 8 }) };

/**
 * POST a body to an endpoint. The name is resolved here, every address is checked, and the
 * connection is pinned to the checked address (a DNS answer that changes between check and connect
 * cannot redirect it). Redirects are not followed: a 3xx is just the answer.
 */
export async function postWebhook(url: string, headers: Record<string, string>, body: string, policy: SendPolicy): Promise<SendResult> {
  const started = performance.now();
  const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...r, latencyMs: Math.round(performance.now() - started) });
  const problem = urlProblem(url, policy);
  if (problem) return done({ status: null, retryAfter: null, snippet: '', error: `The URL ${problem}.` });
  const u = new URL(url);
  const resolved = await pinnedLookup(u, policy.allowPrivate);
  if ('error' in resolved) return done({ status: null, retryAfter: null, snippet: '', error: resolved.error });
  const pinned = resolved.lookup;
  const secure = u.protocol === 'https:';
  return new Promise<SendResult>((resolve) => {
    const req = (secure ? https : http).request(
      u,
      {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        lookup: pinned,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'mpps-webhooks/1', ...headers },
        timeout: policy.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () =>
          resolve(
            done({
              status: res.statusCode ?? null,
              retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
              snippet: Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8'),
              error: null,
            }),
          );
        res.on('data', (c: Buffer) => {
          if (size < SNIPPET_BYTES) chunks.push(c);
          size += c.length;
        });
        res.on('end', finish);
        res.on('error', finish);
      },
    );
    // One deadline for the whole exchange, not only socket idleness.
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${policy.timeoutMs} ms`)));
    req.on('error', (err) => resolve(done({ status: null, retryAfter: null, snippet: '', error: err.message })));
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}
