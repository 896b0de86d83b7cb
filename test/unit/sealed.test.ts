import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { seal, sealKey, unseal } from '../../src/db/sealed';
import { decryptToken, encryptToken } from '../../src/services/sources/secrets';

/** How the two sealers that came before db/sealed wrote their values: the stored rows still hold these. */
function legacy(keyText: string, value: string, versioned: boolean): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', createHash('sha256').update(keyText, 'utf8').digest(), iv);
  const ct = Buffer.concat([c.update(value, 'utf8'), c.final()]);
  const parts = [iv, c.getAuthTag(), ct].map((b) => b.toString('base64url'));
  return (versioned ? ['v1', ...parts] : parts).join('.');
}

describe('the one sealer for secrets at rest', () => {
  it('round-trips any text, never in clear, differently each time', () => {
    const key = sealKey('instance-secret-0123', 'test');
    fc.assert(
      fc.property(fc.string({ minLength: 4 }), (v) => {
        const a = seal(key, v);
        expect(a.startsWith('v1.')).toBe(true);
        expect(a).not.toBe(seal(key, v));
        expect(unseal(key, a)).toBe(v);
      }),
    );
  });
  it('a purpose keeps one use from opening another use, and a tampered or foreign value opens to null', () => {
    const a = seal(sealKey('s', 'one'), 'value');
    expect(unseal(sealKey('s', 'two'), a)).toBeNull();
    expect(unseal(sealKey('other', 'one'), a)).toBeNull();
    const parts = a.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(unseal(sealKey('s', 'one'), parts.join('.'))).toBeNull();
    for (const junk of ['', 'abc', 'v2.a.b.c', 'a.b', 'v1.a.b.c.d']) expect(unseal(sealKey('s', 'one'), junk)).toBeNull();
  });
  it('values sealed by the earlier repository-token sealer still open (connection keys are no longer stored: migration ConnectionKeyNotStored)', () => {
    expect(decryptToken(legacy('repo-key-0123', 'ghp_old', true), 'repo-key-0123')).toBe('ghp_old');
    expect(() => decryptToken(encryptToken('ghp_new', 'repo-key-0123'), 'repo-key-9999')).toThrow();
  });
});
