import { seal, sealKey, unseal } from '../../db/sealed';

/** What a connection stores of its key's value: the one sealer (db/sealed) under a key derived from AUTH_SECRET. */
export function sealSecret(secret: string, value: string): string {
  return seal(sealKey(secret, 'connection-keys'), value);
}

/** null when it was sealed under another AUTH_SECRET (or tampered with). */
export function openSecret(secret: string, sealed: string): string | null {
  return unseal(sealKey(secret, 'connection-keys'), sealed);
}
