import { buildWorkspace } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';

/**
 * Headers against hostile pages (issue 57 item 9): no MIME sniffing of any answer, no Referer leaving a
 * page (whose URL may carry a view-link token), and the OAuth password page neither framed nor able
 * to load anything but its own style.
 */
let app: TestApp;
useTestApp((a) => (app = a));

describe('security headers', () => {
  it('/api answers, errors included, and /api/reference send nosniff and no-referrer', async () => {
    const ws = await buildWorkspace(app, { public: true });
    const answers = [
      await app.http.get('/api/help'),
      await app.http.get('/api/metrics').set('X-Workspace-Id', ws.id),
      await app.http.get('/api/metrics/not-a-metric').set('X-Workspace-Id', ws.id),
      await app.http.get('/api/no-such-route'),
      await app.http.post('/api/metrics').set('X-Workspace-Id', ws.id).set('content-type', 'application/json').send('{'),
      await app.http.get('/api/reference'),
      await app.http.get('/api/openapi.json'),
    ];
    for (const [i, r] of answers.entries()) {
      expect({ i, nosniff: r.headers['x-content-type-options'] }).toEqual({ i, nosniff: 'nosniff' });
      expect(r.headers['referrer-policy']).toBe('no-referrer');
    }
    expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 404, 400, 200, 200]);
  });

  it('pages send a Referrer-Policy that keeps their URL (and a view-link token in it) at home', async () => {
    const ws = await buildWorkspace(app, { public: true });
    for (const path of ['/', `/w/${ws.slug}`]) {
      const r = await app.http.get(path);
      expect(r.status).toBe(200);
      expect(r.headers['referrer-policy']).toBe('no-referrer');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('the OAuth sign-in and consent pages carry a Content-Security-Policy and frame protection', async () => {
    for (const path of ['/oauth/sign-in?client_id=x', '/oauth/consent?client_id=x']) {
      const r = await app.http.get(path);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/html/);
      const csp = r.headers['content-security-policy'];
      expect(csp).toContain("frame-ancestors 'none'");
      // The pages share the web's layout (its own stylesheet): this origin only, nothing from another host.
      expect(csp).toContain("default-src 'self'");
      expect(csp).not.toMatch(/https?:|\*/);
      expect(r.headers['x-frame-options']).toBe('DENY');
      expect(r.headers['referrer-policy']).toBe('no-referrer');
    }
  });
});
