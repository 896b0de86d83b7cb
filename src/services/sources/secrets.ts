import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { DomainError } from '../../errors';

/**
 * Repository tokens at rest: AES-256-GCM under SHA-256(SOURCE_TOKEN_KEY), stored as
 * `v1.<iv>.<tag>.<ciphertext>` (base64url). Never returned by any route.
 */
function keyOf(secret: string | undefined): Buffer {
  if (!secret) throw new DomainError('source_token_key_missing', 'This instance has no SOURCE_TOKEN_KEY configured, so it cannot store or use a repository token.');
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function encryptToken(token: string, secret: string | undefined): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function decryptToken(stored: string, secret: string | undefined): string {
  const [v, iv, tag, body] = stored.split('.');
  if (v !== 'v1' || !iv || !tag || body === undefined) throw new Error('stored source token has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
