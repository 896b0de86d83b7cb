import type { Test } from 'supertest';
import type { TestWorkspace } from './factories';
import type { TestApp } from './harness';

/** Requests against one workspace as its owner (or another key, or anonymously with null); `app` is read per call. */
export function workspaceClient(app: () => TestApp) {
  const as = (ws: TestWorkspace, key: string | null = ws.owner.key) => {
    const h = (r: Test) => {
      r.set('X-Workspace-Id', ws.id);
      return key ? r.set('X-Agent-Key', key) : r;
    };
    return {
      get: (p: string) => h(app().http.get(`/api${p}`)),
      post: (p: string, body: object = {}) => h(app().http.post(`/api${p}`)).send(body),
      put: (p: string, body: object) => h(app().http.put(`/api${p}`)).send(body),
      del: (p: string) => h(app().http.delete(`/api${p}`)),
    };
  };
  /** POST /metrics without books unless the body asks for a timePreference. */
  const create = async (ws: TestWorkspace, body: Record<string, unknown>) => {
    const res = await as(ws).post('/metrics', { timePreference: null, ...body });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return { as, create };
}
