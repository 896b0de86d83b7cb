import type { IncomingHttpHeaders } from 'node:http';
import type { Deps } from '../deps';
import { ApiError } from '../errors';
import type { SignedInAccount } from '../services/accounts';

/**
 * The seam through which the API reads a browser session (issue 67): the account edge
 * (src/doors/accounts, accountEdge) registers its reader when createApp builds the app, so src/api
 * resolves a session caller without importing a front door.
 */
export interface SessionReader {
  /** The signed-in account behind the request's session cookie; null when it is unknown, expired or revoked. */
  sessionOf(deps: Deps, h: IncomingHttpHeaders): Promise<SignedInAccount | null>;
}

let reader: SessionReader | null = null;

/** Called once by the account edge; a later call replaces the reader (every app built reads the same way). */
export function registerSessions(r: SessionReader): void {
  reader = r;
}

/** The registered reader; a request with a session cookie before any app was built is a wiring fault, said so. */
export function sessions(): SessionReader {
  if (!reader) throw new ApiError('internal_error', 'No session reader is registered: the account edge (src/doors/accounts accountEdge) registers it when createApp builds the app.');
  return reader;
}
