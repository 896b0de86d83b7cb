/** Accounts (spec §5.1): the account system (Better Auth: email and password, sessions), one participant per account. */
export { accountSystem, AUTH_BASE_PATH, authOptions, MCP_PATH, mcpResource, OAUTH_CONSENT_PAGE, OAUTH_LOGIN_PAGE, oauthIssuer, RESET_PASSWORD_PAGE, closeAccountSystem, COOKIE_PREFIX, cookieSaid, dropUnreadableSigningKeys, type SignedInAccount } from './auth';
export { configureMailer, logMailer, mailerFor, mailerReady, mailSaid, sendAccountMail, smtpMailer, useMailer, type AccountMail, type Mailer } from './mailer';
export { deleteAccount, ensureAccountParticipant, nicknameFrom, participantOfAccount, principalOfAccount, sessionPrincipal } from './participant';
export { AUTH_LIBRARY_TABLES } from './tables';
export { authServerMetadata, looksLikeAccessToken, oauthClientSummary, protectedResourceMetadata, verifyMcpToken, type McpTokenClaims } from './oauth';
export { revokeClientGrants } from './grants';
