import { registerSessions, sessions, type SessionReader } from '../../src/api/sessions';
import { endedSessionCookie, hasSessionCookie, sessionCookieName } from '../../src/edge/sessionCookie';
import type { Config } from '../../src/config';

/** The API reads a session only through the reader the account edge registers (issue 67). */
describe('the session seam (src/api/sessions.ts)', () => {
  it('refuses with a sentence before a reader is registered, then hands out the registered one', async () => {
    expect(() => sessions()).toThrow(expect.objectContaining({ code: 'internal_error', message: expect.stringMatching(/accountEdge/) }));
    const account = { userId: 'u1', email: 'a@example.com', name: 'A', sessionId: 's1' };
    const reader: SessionReader = { sessionOf: async (_deps, h) => (h.cookie === 'mine' ? account : null) };
    registerSessions(reader);
    expect(sessions()).toBe(reader);
    await expect(sessions().sessionOf({} as never, { cookie: 'mine' })).resolves.toEqual(account);
    await expect(sessions().sessionOf({} as never, {})).resolves.toBeNull();
  });

  it('names the session cookie by its Secure attribute and ends it with the same attributes', () => {
    const plain = { secureCookies: false } as Config;
    const secure = { secureCookies: true } as Config;
    expect(sessionCookieName(plain)).toBe('mpps.session_token');
    expect(sessionCookieName(secure)).toBe('__Secure-mpps.session_token');
    expect(endedSessionCookie(plain)).toBe('mpps.session_token=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
    expect(endedSessionCookie(secure)).toBe('__Secure-mpps.session_token=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure');
    expect(hasSessionCookie({ cookie: 'a=1; __Secure-mpps.session_token=x' })).toBe(true);
    expect(hasSessionCookie({ cookie: 'a=1' })).toBe(false);
    expect(hasSessionCookie({})).toBe(false);
  });
});
