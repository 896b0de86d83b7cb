import type { IncomingHttpHeaders } from 'node:http';
import { fromNodeHeaders } from 'better-auth/node';
import type { Config } from '../config';
import type { Deps } from '../deps';
import { accountSystem, COOKIE_PREFIX, type SignedInAccount } from '../services/accounts';

/**
 * The browser session at the edge (issue 58): the cookie is read here, by the front doors (the REST
 * edge's caller resolution, the pages through it, the OAuth pages); services/accounts sees the
 * account it names, never the cookie.
 */

/** The session cookie's name (the __Secure- prefix comes with the Secure attribute). */
export function sessionCookieName(config: Config): string {
  return `${config.secureCookies ? '__Secure-' : ''}${COOKIE_PREFIX}.session_token`;
}

/** The Set-Cookie that ends the session cookie in the browser (account deletion, a session found ended). */
export function endedSessionCookie(config: Config): string {
  return `${sessionCookieName(config)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${config.secureCookies ? '; Secure' : ''}`;
}

/** Whether the request carries this service's session cookie at all (cheap: no database). */
export function hasSessionCookie(h: IncomingHttpHeaders): boolean {
  const cookie = h.cookie;
  return typeof cookie === 'string' && cookie.includes(`${COOKIE_PREFIX}.session_token=`);
}

/**
 * The signed-in account behind the request's session cookie (the account system's server API checks
 * its signature and reads the session); null when the cookie is unknown, expired or revoked.
 */
export async function sessionOf(deps: Deps, h: IncomingHttpHeaders): Promise<SignedInAccount | null> {
  const found = await accountSystem(deps).auth.api.getSession({ headers: fromNodeHeaders(h), query: { disableCookieCache: true } });
  if (!found) return null;
  return { userId: found.user.id, email: found.user.email, name: found.user.name, sessionId: found.session.id };
}
