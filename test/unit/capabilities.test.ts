import { effectiveCapabilities, metricReadable, metricTradable, scopeCapabilities, scopesWithin, type CapabilityInput } from '../../src/domain/capabilities';

const base: CapabilityInput = { anonymous: false, isMaster: false, isOwner: false, isPublicWorkspace: false, viewLink: false, groupCapabilities: [], scopes: ['*'] };
const caps = (i: Partial<CapabilityInput>) => [...effectiveCapabilities({ ...base, ...i })].sort();

describe('effective capabilities', () => {
  it.each<[string, Partial<CapabilityInput>, string[]]>([
    ['anonymous on a private workspace', { anonymous: true }, []],
    ['anonymous on a public workspace reads only, even where a group grants trade', { anonymous: true, isPublicWorkspace: true, groupCapabilities: [['read', 'trade']] }, ['read']],
    ['anonymous with a view link', { anonymous: true, viewLink: true }, ['read']],
    ['the master key holds everything', { isMaster: true, scopes: null }, ['manage', 'manage_workspace', 'read', 'trade']],
    ['the owner holds everything', { isOwner: true }, ['manage', 'manage_workspace', 'read', 'trade']],
    ['the union over groups', { groupCapabilities: [['read'], ['trade']] }, ['read', 'trade']],
    ['manage does not imply manage_workspace', { groupCapabilities: [['read', 'trade', 'manage']] }, ['manage', 'read', 'trade']],
    ['a key scoped to read narrows a trader', { groupCapabilities: [['read', 'trade']], scopes: ['workspace:read'] }, ['read']],
    ['workspace:manage implies trade and read', { groupCapabilities: [['read', 'trade', 'manage']], scopes: ['workspace:manage'] }, ['manage', 'read', 'trade']],
    ['an account-only key reaches no workspace capability', { groupCapabilities: [['read', 'trade']], scopes: ['account:read'] }, []],
    ['a non-member of a public workspace reads', { isPublicWorkspace: true }, ['read']],
  ])('%s', (_label, input, expected) => {
    expect(caps(input)).toEqual(expected);
  });

  it('scopes map to capabilities, and keys never mint broader scopes than their own', () => {
    expect([...scopeCapabilities(['workspace:trade'])].sort()).toEqual(['read', 'trade']);
    expect(scopesWithin(['workspace:trade'], ['workspace:read', 'workspace:trade'])).toEqual([]);
    expect(scopesWithin(['workspace:trade'], ['workspace:manage', '*'])).toEqual(['workspace:manage', '*']);
    expect(scopesWithin(['workspace:read', 'account:read'], ['account:keys'])).toEqual(['account:keys']);
    expect(scopesWithin(['*'], ['*'])).toEqual([]);
  });

  it('per-metric permissions narrow a group, and the union over groups can widen back', () => {
    const have = new Set(['read', 'trade'] as const);
    const narrowed = [{ capabilities: ['read', 'trade'], metricPermissions: { m1: { read: false }, m2: { trade: false } } }];
    expect(metricReadable(narrowed, 'm1', have)).toBe(false);
    expect(metricTradable(narrowed, 'm1', have)).toBe(false);
    expect(metricReadable(narrowed, 'm2', have)).toBe(true);
    expect(metricTradable(narrowed, 'm2', have)).toBe(false);
    expect(metricTradable(narrowed, 'm3', have)).toBe(true);
    const widened = [...narrowed, { capabilities: ['read'], metricPermissions: {} }];
    expect(metricReadable(widened, 'm1', have)).toBe(true);
    expect(metricReadable(narrowed, 'm1', new Set(['read', 'trade', 'manage'] as const))).toBe(true);
  });
});
