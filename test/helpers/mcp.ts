import type { AddressInfo } from 'node:net';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestPerson } from './accounts';
import type { TestApp } from './harness';

export function mcpUrl(app: TestApp): URL {
  return new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`);
}

/** The assistant's side of OAuth, as an MCP host keeps it: registration, PKCE verifier, tokens. */
export class TestOAuthProvider implements OAuthClientProvider {
  /** A web host's https redirect by default; a desktop host's loopback one (any port, no application_type) when given. */
  constructor(readonly redirectUrl = 'https://assistant.example/callback') {}
  authorizationUrl?: URL;
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier?: string;
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'offline_access',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier');
    return this.verifier;
  }
}

/** What the person answers to the next confirmations (elicitations), in order; and what was asked. */
export interface Confirmations {
  /** An answer, or 'never' to leave the confirmation unanswered (the server's wait runs out). */
  answers: Array<ElicitResult | 'never'>;
  asked: string[];
}

export function newClient(confirmations: Confirmations): Client {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    confirmations.asked.push(String(req.params.message));
    const next = confirmations.answers.shift();
    if (!next) throw new Error(`unexpected confirmation: ${req.params.message}`);
    if (next === 'never') return new Promise<ElicitResult>(() => undefined);
    return next;
  });
  return client;
}

const pathOf = (location: string, app: TestApp) => {
  const u = new URL(location, mcpUrl(app));
  return `${u.pathname}${u.search}`;
};

/**
 * The real OAuth flow end to end with the SDK's auth support: the client meets 401, discovers the
 * resource and authorization server metadata, registers dynamically and sends the browser to
 * authorize (PKCE S256, resource); the person's browser (signed in, or signing in on the page)
 * consents; the client exchanges the code and connects.
 */
export async function connectThroughOAuth(app: TestApp, person: TestPerson, opts: { signInOnPage?: boolean; redirectUrl?: string; grants?: string[] } = {}) {
  const provider = new TestOAuthProvider(opts.redirectUrl);
  const confirmations: Confirmations = { answers: [], asked: [] };
  const first = newClient(confirmations);
  await first.connect(new StreamableHTTPClientTransport(mcpUrl(app), { authProvider: provider })).then(
    () => {
      throw new Error('connected without authorization');
    },
    (err) => {
      if (!(err instanceof UnauthorizedError)) throw err;
    },
  );
  const authorize = provider.authorizationUrl!;
  let res = await person.browser.get(pathOf(authorize.toString(), app)).redirects(0);
  if (res.status !== 302) throw new Error(`authorize: ${res.status} ${res.text.slice(0, 300)}`);
  let location = res.headers.location as string;
  if (opts.signInOnPage) {
    if (!location.includes('/oauth/sign-in')) throw new Error(`expected the sign-in page, got ${location}`);
    const page = await person.browser.get(pathOf(location, app));
    if (page.status !== 200 || !page.text.includes('name="password"')) throw new Error(`sign-in page: ${page.status}`);
    res = await person.browser.post('/oauth/sign-in').type('form').send({ oauth_query: new URL(location, mcpUrl(app)).search.slice(1), email: person.email, password: person.password });
    if (res.status !== 302) throw new Error(`sign-in: ${res.status} ${/class="err">([^<]*)/.exec(res.text)?.[1] ?? res.text.slice(0, 300)}`);
    location = res.headers.location as string;
  }
  if (!location.includes('/oauth/consent')) throw new Error(`expected the consent page, got ${location}`);
  const consentPage = await person.browser.get(pathOf(location, app));
  if (consentPage.status !== 200 || !consentPage.text.includes('Test Assistant')) throw new Error(`consent page: ${consentPage.status} ${consentPage.text.slice(0, 300)}`);
  // The browser sends the boxes left ticked (all of them, unless the person unticks some).
  const ticked = opts.grants ?? [...consentPage.text.matchAll(/name="grant" value="([^"]+)" checked/g)].map((m) => m[1]);
  const form = new URLSearchParams({ oauth_query: new URL(location, mcpUrl(app)).search.slice(1), accept: 'yes' });
  for (const g of ticked) form.append('grant', g);
  res = await person.browser.post('/oauth/consent').type('form').send(form.toString());
  if (res.status !== 302) throw new Error(`consent: ${res.status} ${/class="err">([^<]*)/.exec(res.text)?.[1] ?? res.text.slice(0, 300)}`);
  const back = new URL(res.headers.location as string);
  const code = back.searchParams.get('code');
  if (!code || !back.toString().startsWith(provider.redirectUrl)) throw new Error(`no code in ${back}`);
  const transport = new StreamableHTTPClientTransport(mcpUrl(app), { authProvider: provider });
  await transport.finishAuth(code);
  const client = newClient(confirmations);
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(app), { authProvider: provider }));
  return { client, provider, confirmations, authorize, code };
}

/** The tool result's text, parsed as JSON when it is JSON. */
export function resultBody(result: unknown): any {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  const t = content.find((c) => c.type === 'text')?.text ?? '';
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}
