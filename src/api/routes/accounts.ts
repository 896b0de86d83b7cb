import { deleteAccount, sessionCookieName } from '../../services/accounts';
import { auth } from '../auth';
import { defineRoute } from '../registry';

// The rest of /api/auth/* is the account system itself (services/accounts): sign-up/email,
// sign-in/email, sign-out, get-session, request-password-reset, reset-password.

defineRoute({
  method: 'DELETE',
  path: '/auth/me',
  auth: auth.session(),
  summary:
    'Delete your account (browser session only: no key, not even the master key, and no key scope can do it). The account, its sessions, password, OAuth grants and connections go; its participant, its history and its own agent keys stay. 204.',
  handler: async (c) => {
    const me = c.identity();
    await deleteAccount(c.deps, me.accountId!);
    const secure = !c.deps.config.development;
    c.koa.append('Set-Cookie', `${sessionCookieName(c.deps.config)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
    return undefined;
  },
});
