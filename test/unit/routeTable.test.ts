import * as table from '../../src/api/routes';
import { registeredRoutes, routeName, type AnyRoute } from '../../src/api/registry';

describe('the route table (src/api/routes/index.ts)', () => {
  const exported = Object.entries(table) as [string, AnyRoute][];

  it('names routes mechanically from their method and path', () => {
    expect(routeName('GET', '/agents/:id/balance')).toBe('getAgentsByIdBalance');
    expect(routeName('POST', '/predictions/trade')).toBe('postPredictionsTrade');
    expect(routeName('DELETE', '/auth/me')).toBe('deleteAuthMe');
    expect(routeName('GET', '/agents/:id/keys/:keyId')).toBe('getAgentsByIdKeysByKeyId');
    expect(routeName('GET', '/data-room/actions')).toBe('getDataRoomActions');
    expect(routeName('GET', '/openapi.json')).toBe('getOpenapiJson');
    expect(routeName('GET', '/guides/_categories')).toBe('getGuidesCategories');
  });

  it('exports each route under the name of its method and path, and nothing else', () => {
    const registered = new Set<AnyRoute>(registeredRoutes());
    const wrong = exported.filter(([name, route]) => !registered.has(route) || name !== routeName(route.method, route.path)).map(([name, route]) => `${name}: ${route?.method} ${route?.path}`);
    expect(wrong).toEqual([]);
  });

  it('exports every registered route exactly once', () => {
    const times = new Map<AnyRoute, number>();
    for (const [, route] of exported) times.set(route, (times.get(route) ?? 0) + 1);
    const notOnce = registeredRoutes()
      .filter((r) => times.get(r) !== 1)
      .map((r) => `${r.method} ${r.path}: exported ${times.get(r) ?? 0} times`);
    expect(notOnce).toEqual([]);
    expect(exported.length).toBe(registeredRoutes().length);
  });
});
