/** Accounts (spec §5.1): the account system (Better Auth: email and password, sessions), one participant per account. */
export { accountSystem, AUTH_BASE_PATH, authOptions, closeAccountSystem, COOKIE_PREFIX, hasSessionCookie, sessionCookieName, sessionOf } from './auth';
export { logMailer, sendAccountMail, useMailer, type AccountMail, type Mailer } from './mailer';
export { deleteAccount, ensureAccountParticipant, nicknameFrom, participantOfAccount, sessionPrincipal } from './participant';
export { AUTH_LIBRARY_TABLES } from './tables';
