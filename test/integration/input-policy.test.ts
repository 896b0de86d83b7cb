import '../../src/api/routes';
import { registeredRoutes } from '../../src/api/registry';
import { buildWorkspace } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';

/**
 * One input policy (issue 57 item 5, docs/guides/compatibility.md): every route refuses a body field
 * it does not take with 400 validation_failed naming the field, before anything happens; required
 * sentences are not blank; validation sentences read as English.
 */
let app: TestApp;
useTestApp((a) => (app = a), { ONBOARDING_OPEN: 'true' });

describe('input policy', () => {
  it('every route with a body refuses an unknown field with 400, naming it', async () => {
    const ws = await buildWorkspace(app, { public: true });
    // The account system's own routes (documented in the catalog, answered by Better Auth) validate their bodies themselves.
    const routes = registeredRoutes().filter((r) => r.body && !r.auth.sessionOnly && !r.accountSystem);
    expect(routes.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const r of routes) {
      const path = `/api${r.path}`.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const res = await (app.http as any)[r.method.toLowerCase()](path).set({ 'X-API-Key': app.masterKey, 'X-Workspace-Id': ws.id }).send({ zzUnknown: 1 });
      const named = typeof res.body?.error === 'string' && res.body.error.includes('"zzUnknown"');
      if (res.status !== 400 || res.body.code !== 'validation_failed' || !named) wrong.push(`${r.method} ${r.path}: ${res.status} ${res.body?.code} ${res.body?.error}`);
    }
    expect(wrong).toEqual([]);
  });

  it('blank sentences are refused; the sentences read as English; a JSON string body is not called invalid JSON', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const owner = { 'X-Agent-Key': ws.owner.key, 'X-Workspace-Id': ws.id };
    const blank = await app.http.post('/api/telemetry/decisions').set(owner).send({ decisions: [{ marketId: '00000000-0000-4000-8000-000000000000', outcome: 'skip', reasoning: '   ' }] });
    expect(blank.status).toBe(400);
    expect(blank.body.error).toBe('The body field "decisions.0.reasoning" is refused: must not be blank: say why in a sentence.');
    const arr = await app.http.post('/api/feedback').set(owner).send([1]);
    expect(arr.status).toBe(400);
    expect(arr.body.error).toMatch(/^The body is refused: .+\.$/);
    expect(arr.body.error).not.toMatch(/Invalid the/);
    const str = await app.http.post('/api/feedback').set(owner).set('content-type', 'application/json').send('"just a string"');
    expect({ status: str.status, code: str.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(str.body.error).toMatch(/must be a JSON object/);
    const broken = await app.http.post('/api/feedback').set(owner).set('content-type', 'application/json').send('{"message":');
    expect({ status: broken.status, code: broken.body.code }).toEqual({ status: 400, code: 'malformed_json' });
    // Known fields still pass.
    expect((await app.http.post('/api/feedback').set(owner).send({ message: 'works' })).status).toBe(201);
  });
});
