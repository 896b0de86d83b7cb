import type Koa from 'koa';
import type { Deps } from '../../deps';
import { consumePoint, type Bucket } from '../../services/access';
import type { Caller } from '../access';

/** The client address: the socket's, or the outermost trusted proxy's X-Forwarded-For entry (TRUST_PROXY_HOPS). */
function clientAddress(ctx: Koa.Context): string {
  return ctx.ip || ctx.request.socket.remoteAddress || 'unknown';
}

/**
 * The general limit, applied once the caller is resolved: per key id for key callers, per client
 * address for anonymous ones, and per participant over all its keys. The master key (the platform
 * operator) is not limited.
 */
export async function limitRequest(deps: Deps, caller: Caller | null, ctx: Koa.Context): Promise<void> {
  if (caller?.isMaster) return;
  const keyState = await consumePoint(deps, 'request', caller?.keyId ? `key:${caller.keyId}` : caller?.accountId ? `account:${caller.accountId}` : `ip:${clientAddress(ctx)}`);
  const mine = caller ? await consumePoint(deps, 'participant', caller.agentId) : null;
  // The headers tell the nearer of the two limits.
  const state = mine && keyState && mine.remaining < keyState.remaining ? mine : keyState;
  if (state) {
    ctx.set('X-RateLimit-Limit', String(state.limit));
    ctx.set('X-RateLimit-Remaining', String(state.remaining));
    ctx.set('X-RateLimit-Reset', String(state.resetSeconds));
  }
}

/** Registration, onboarding (one shared bucket) and the waitlist: per client address. */
export async function limitByAddress(deps: Deps, ctx: Koa.Context, bucket: Exclude<Bucket, 'request'> = 'signup'): Promise<void> {
  await consumePoint(deps, bucket, clientAddress(ctx));
}
