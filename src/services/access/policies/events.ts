import { rules } from './rule';

/**
 * The event feed and stream: anonymous callers read a public workspace named by X-Workspace-Id; with a
 * key and no header, every workspace of the caller (the feed filters each event by the read policy).
 */

/** GET /events */
export const list = rules.custom({ label: 'public-read', anonymousRead: true, workspaceOptional: true });
/** GET /events/stream */
export const readStream = rules.custom({ label: 'public-read', anonymousRead: true, workspaceOptional: true });
