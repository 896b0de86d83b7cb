import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** AES-256-GCM under a key derived from AUTH_SECRET: what a connection stores of its key's value. */
function keyOf(secret: string): Buffer {
  return createHash('sha256').update(`connection-keys:${secret}`).digest();
}

export function sealSecret(secret: string, value: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const ct = Buffer.concat([c.update(value, 'utf8'), c.final()]);
  return [iv, c.getAuthTag(), ct].map((b) => b.toString('base64url')).join('.');
}

/** null when it was sealed under another AUTH_SECRET (or tampered with). */
export function openSecret(secret: string, sealed: string): string | null {
  const [iv, tag, ct] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !tag || !ct) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', keyOf(secret), iv);
    d.setAuthTag(tag);
    return Buffer.concat([d.update(ct), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}
