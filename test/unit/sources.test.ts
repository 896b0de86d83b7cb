import { DomainError } from '../../src/errors';
import { checkRef, checkRepoPath, isRepository } from '../../src/services/sources/paths';
import { decryptToken, encryptToken } from '../../src/services/sources/secrets';

describe('repository paths and refs', () => {
  it.each(['', '/', 'README.md', 'docs/metrics.md', 'a/b/c.txt', 'docs/', 'name with space.md', 'v1.2/notes..md'])('accepts %j', (p) => {
    expect(() => checkRepoPath(p)).not.toThrow();
  });
  it('strips trailing slashes only', () => {
    expect(checkRepoPath('docs/')).toBe('docs');
    expect(checkRepoPath('/')).toBe('');
  });
  it.each(['..', '../x', 'a/../../b', 'a/..', './a', 'a/./b', '/etc/passwd', 'a\\b', 'a//b', 'a/%2e%2e/b', '%2E%2E', 'a\u0000b', 'a%zz', 'x'.repeat(1001)])('refuses %j with a sentence', (p) => {
    try {
      checkRepoPath(p);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('source_path_invalid');
      expect((err as DomainError).message).toMatch(/refused: .+\.$/);
    }
  });
  it('refs: branch, tag or sha; no .. or odd characters', () => {
    for (const ok of ['main', 'v1.2.3', 'feature/x', 'HEAD', 'a'.repeat(40)]) expect(checkRef(ok)).toBe(ok);
    for (const bad of ['main/../x', '../main', '/main', 'main/', 'a b', 'a;b', '', 'x'.repeat(201)]) expect(() => checkRef(bad)).toThrow(DomainError);
  });
  it('refs as git check-ref-format takes them: no part starting with ., ending in .lock, no empty part, no trailing .', () => {
    for (const ok of ['release/2026.11', 'v1.0-rc.1', 'a.b/c_d']) expect(checkRef(ok)).toBe(ok);
    for (const bad of ['.hidden', 'feature/.x', 'main.lock', 'a/b.lock', 'a//b', 'main.', '.', '..']) expect(() => checkRef(bad)).toThrow(/as git allows/);
  });
  it('repositories: owner/name, never . or .. as the name', () => {
    for (const ok of ['acme/handbook', 'a/b.c', 'a-b/.github']) expect(isRepository(ok)).toBe(true);
    for (const bad of ['a/..', 'a/.', '../b', 'a/b/c', 'a', '-a/b']) expect(isRepository(bad)).toBe(false);
  });
});

describe('repository tokens at rest', () => {
  const key = 'unit-test-source-key-0123';
  it('round-trips, differs each time, and never holds the token in clear', () => {
    const a = encryptToken('ghp_secret', key);
    const b = encryptToken('ghp_secret', key);
    expect(a).not.toBe(b);
    expect(a).not.toContain('ghp_secret');
    expect(decryptToken(a, key)).toBe('ghp_secret');
  });
  it('refuses another key or a tampered value, and a missing key with its code', () => {
    const a = encryptToken('ghp_secret', key);
    expect(() => decryptToken(a, 'another-key-0123456789')).toThrow();
    const parts = a.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => decryptToken(parts.join('.'), key)).toThrow();
    expect(() => encryptToken('x', undefined)).toThrow(expect.objectContaining({ code: 'source_token_key_missing' }));
  });
});
