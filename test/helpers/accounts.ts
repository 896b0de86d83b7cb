import request from 'supertest';
import { uniqueName, type TestApp } from './harness';

export interface TestPerson {
  email: string;
  password: string;
  /** A cookie jar of its own: the browser of this person. */
  browser: ReturnType<typeof request.agent>;
  /** The participant the session resolves to (GET /api/agents/me with the cookie). */
  agentId: string;
}

/** Sign up, then sign in, through the account system over real HTTP; the returned browser holds the session cookie. */
export async function signUp(app: TestApp, name = uniqueName('person')): Promise<TestPerson> {
  const email = `${name}@example.com`;
  const password = `pw-${name}-secret`;
  const browser = request.agent(app.server);
  const res = await browser.post('/api/auth/sign-up/email').send({ email, password, name });
  if (res.status !== 200) throw new Error(`sign-up failed: ${res.status} ${JSON.stringify(res.body)}`);
  // Sign-up signs nobody in (it answers alike for a taken email): the person signs in.
  const signedIn = await browser.post('/api/auth/sign-in/email').send({ email, password });
  if (signedIn.status !== 200) throw new Error(`sign-in failed: ${signedIn.status} ${JSON.stringify(signedIn.body)}`);
  const me = await browser.get('/api/agents/me');
  if (me.status !== 200) throw new Error(`session read failed: ${me.status} ${JSON.stringify(me.body)}`);
  return { email, password, browser, agentId: me.body.id };
}
