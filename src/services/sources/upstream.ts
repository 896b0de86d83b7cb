import http from 'node:http';
import https from 'node:https';
import { DomainError } from '../../errors';
import { logger } from '../../logger';
import { pinnedLookup } from '../hooks';

/**
 * One GET to the repository host, as the bridge makes it: the host's addresses are checked after
 * resolution (loopback, private, link-local and multicast refused unless allowPrivate) and the
 * connection is pinned to the checked one; redirects are not followed; the whole exchange has one
 * deadline; the body is read up to maxBytes. Every way it can fail is a DomainError with its own
 * code, and nothing the host said is passed on to the caller.
 */
export interface UpstreamAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface UpstreamPolicy {
  timeoutMs: number;
  allowPrivate: boolean;
  maxBytes: number;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|EPROTO|HOSTNAME_MISMATCH|ERR_OSSL)/;

export function upstreamTimeout(timeoutMs: number): DomainError {
  return new DomainError('source_upstream_timeout', `The repository host did not answer within ${timeoutMs} ms; try again later.`, { retryAfter: 5 });
}

export async function getUpstream(url: string, headers: Record<string, string>, policy: UpstreamPolicy): Promise<UpstreamAnswer> {
  const u = new URL(url);
  const started = Date.now();
  // The deadline covers the name's resolution too (a resolver that does not answer is a timeout).
  let timer: NodeJS.Timeout | undefined;
  const resolved = await Promise.race([
    pinnedLookup(u, policy.allowPrivate),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(upstreamTimeout(policy.timeoutMs)), policy.timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if ('error' in resolved) {
    if (resolved.refused) {
      throw new DomainError('source_upstream_refused', `The repository host ${u.hostname} resolves to a loopback, private, link-local or multicast address; the bridge does not reach it.`);
    }
    throw new DomainError('source_upstream_failed', `The repository host ${u.hostname} could not be resolved; try again later.`, { upstreamStatus: 0 });
  }
  const secure = u.protocol === 'https:';
  return new Promise<UpstreamAnswer>((resolve, reject) => {
    let timedOut = false;
    const req = (secure ? https : http).request(u, { method: 'GET', lookup: resolved.lookup, headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > policy.maxBytes) {
          req.destroy();
          reject(new DomainError('source_upstream_failed', `The repository host sent more than ${policy.maxBytes} bytes for one answer; the bridge stopped reading.`, { upstreamStatus: res.statusCode ?? 0 }));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (err) => req.destroy(err));
    });
    const deadline = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('deadline'));
    }, Math.max(1, policy.timeoutMs - (Date.now() - started)));
    req.on('close', () => clearTimeout(deadline));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (timedOut) return reject(upstreamTimeout(policy.timeoutMs));
      const code = err.code ?? '';
      logger.warn({ err, host: u.host }, 'repository host unreachable');
      if (secure && (TLS_CODES.test(code) || /ssl|tls|certificate/i.test(err.message))) {
        return reject(new DomainError('source_upstream_tls', `The TLS connection to the repository host ${u.host} failed (${code || 'handshake'}): its certificate could not be verified.`, { tlsError: code || 'handshake' }));
      }
      reject(new DomainError('source_upstream_failed', `The repository host ${u.host} could not be reached (${code || 'connection failed'}); try again later.`, { upstreamStatus: 0 }));
    });
    req.end();
  });
}
