import { rules } from './rule';

/** The account (a browser session's own): only the session itself may act on it. */

/** DELETE /auth/me */
export const deleteAccount = rules.session();
