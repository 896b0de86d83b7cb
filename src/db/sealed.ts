import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * The one sealer for secrets at rest (repository tokens, connection keys): AES-256-GCM, stored as
 * `v1.<iv>.<tag>.<ciphertext>` (base64url). Each use names its key with a purpose, so one instance
 * secret never opens another use's values. `unseal` also reads the earlier unversioned
 * `<iv>.<tag>.<ciphertext>` form, so values sealed before the two sealers became one stay readable.
 */
export type SealKey = Buffer & { readonly __sealKey: true };

/** SHA-256 of `purpose:secret` (or of the bare secret where a use predates purposes: repository tokens). */
export function sealKey(secret: string, purpose: string | null): SealKey {
  return createHash('sha256').update(purpose === null ? secret : `${purpose}:${secret}`, 'utf8').digest() as SealKey;
}

export function seal(key: SealKey, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The sealed value, or null when it was sealed under another key, tampered with, or is not a sealed value. */
export function unseal(key: SealKey, sealed: string): string | null {
  const parts = sealed.split('.');
  const [iv, tag, body] = parts.length === 4 && parts[0] === 'v1' ? parts.slice(1) : parts.length === 3 ? parts : [];
  if (!iv || !tag || body === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
