import { z } from 'zod';
import { deleteAccount } from '../../services/accounts';
import { endedSessionCookie } from '../../edge/sessionCookie';
import { policies } from '../../services/access';
import { defineRoute } from '../registry';

// The rest of /api/auth/* is the account system itself (services/accounts): sign-up/email,
// sign-in/email, sign-out, get-session, request-password-reset, reset-password.

export const deleteAuthMe = defineRoute({
  method: 'DELETE',
  path: '/auth/me',
  auth: policies.accounts.deleteAccount,
  summary:
    'Delete your account (browser session only: no key, not even the master key, and no key scope can do it). The account, its sessions, password, OAuth grants and connections go; its participant, its history and its own agent keys stay. 204.',
  handler: async (c) => {
    const me = c.identity();
    await deleteAccount(c.deps, me.accountId!);
    c.koa.append('Set-Cookie', endedSessionCookie(c.deps.config));
    return undefined;
  },
});

// The account system's public routes, documented here for GET /help and the OpenAPI document; the
// account system answers them itself (registry: accountSystem), its refusals in the API's error shape.
const accountRoute = { accountSystem: true, auth: policies.accounts.accountSystem, errors: ['account_refused'], handler: async () => undefined } as const;
const userSchema = z.looseObject({ id: z.string(), name: z.string(), email: z.string(), emailVerified: z.boolean(), createdAt: z.string(), updatedAt: z.string() });
const passwordSchema = z.string().min(8).max(128);

export const postAuthSignUpEmail = defineRoute({
  ...accountRoute,
  method: 'POST',
  path: '/auth/sign-up/email',
  summary: 'Create an account { name, email, password (8+ characters) }; the account gets its own participant. It answers alike whether or not the email already has an account, so it does not sign in: sign in next (POST /auth/sign-in/email).',
  body: z.object({ name: z.string(), email: z.email(), password: passwordSchema, callbackURL: z.string().optional() }),
  response: z.looseObject({ token: z.string().nullable(), user: userSchema }),
});

export const postAuthSignInEmail = defineRoute({
  ...accountRoute,
  method: 'POST',
  path: '/auth/sign-in/email',
  summary: 'Sign in { email, password, rememberMe? }: sets the session cookie (mpps.session_token). Wrong email or password: 401 account_refused, reason INVALID_EMAIL_OR_PASSWORD.',
  body: z.object({ email: z.email(), password: z.string(), rememberMe: z.boolean().optional(), callbackURL: z.string().optional() }),
  response: z.looseObject({ redirect: z.boolean(), token: z.string(), url: z.string().nullish(), user: userSchema }),
});

export const postAuthSignOut = defineRoute({
  ...accountRoute,
  method: 'POST',
  path: '/auth/sign-out',
  summary: 'Sign out: ends the session and clears its cookie.',
  response: z.object({ success: z.boolean() }),
});

export const getAuthGetSession = defineRoute({
  ...accountRoute,
  method: 'GET',
  path: '/auth/get-session',
  summary: 'The signed-in session and its user, or null without a session cookie.',
  response: z.looseObject({ session: z.looseObject({}), user: userSchema }).nullable(),
});

export const postAuthRequestPasswordReset = defineRoute({
  ...accountRoute,
  method: 'POST',
  path: '/auth/request-password-reset',
  summary: 'Ask for a password reset { email, redirectTo? }: a link valid for an hour goes to the address when it has an account (the answer is the same either way).',
  body: z.object({ email: z.email(), redirectTo: z.string().optional() }),
  response: z.looseObject({ status: z.boolean() }),
});

export const postAuthResetPassword = defineRoute({
  ...accountRoute,
  method: 'POST',
  path: '/auth/reset-password',
  summary: "Choose a new password { newPassword, token } with the reset link's token; every session of the account ends.",
  body: z.object({ newPassword: passwordSchema, token: z.string() }),
  response: z.object({ status: z.boolean() }),
});
