import { rules } from './rule';

/** The account (a browser session's own): only the session itself may act on it. */

/** DELETE /auth/me */
export const deleteAccount = rules.session();
/** POST /auth/sign-up/email, sign-in/email, sign-out, GET get-session, password reset: the account system answers them itself. */
export const accountSystem = rules.none();
