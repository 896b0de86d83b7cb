import type { IncomingHttpHeaders } from 'node:http';
import { fromNodeHeaders } from 'better-auth/node';
import type { Deps } from '../../deps';
import { accountSystem, type SignedInAccount } from '../../services/accounts';

/**
 * The browser session at the edge (issue 58): the session is read here, for the account pages, the
 * OAuth pages and (through the seam src/api/sessions.ts, registered by accountEdge) the API's caller
 * resolution; services/accounts sees the account it names, never the cookie.
 */

/**
 * The signed-in account behind the request's session cookie (the account system's server API checks
 * its signature and reads the session); null when the cookie is unknown, expired or revoked.
 */
export async function sessionOf(deps: Deps, h: IncomingHttpHeaders): Promise<SignedInAccount | null> {
  const found = await accountSystem(deps).auth.api.getSession({ headers: fromNodeHeaders(h), query: { disableCookieCache: true } });
  if (!found) return null;
  return { userId: found.user.id, email: found.user.email, name: found.user.name, sessionId: found.session.id };
}
