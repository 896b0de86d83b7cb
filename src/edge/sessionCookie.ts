import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../config';
import { COOKIE_PREFIX } from '../services/accounts';

/**
 * The browser session's cookie as the front doors name it (issue 58): the API clears it when an
 * account is deleted, the account edge when a session ends, and the caller resolution asks whether
 * a request carries one before the account system is asked (src/doors/accounts/session.ts reads it).
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
