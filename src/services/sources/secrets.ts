import { seal, sealKey, unseal, type SealKey } from '../../db/sealed';
import { DomainError } from '../../errors';

/** Repository tokens at rest, sealed by the one sealer (db/sealed) under SOURCE_TOKEN_KEY. Never returned by any route. */
function keyOf(secret: string | undefined): SealKey {
  if (!secret) throw new DomainError('source_token_key_missing', 'This instance has no SOURCE_TOKEN_KEY configured, so it cannot store or use a repository token.');
  return sealKey(secret, null);
}

export function encryptToken(token: string, secret: string | undefined): string {
  return seal(keyOf(secret), token);
}

/** Throws a plain Error when the value does not open under this key (the caller names the source). */
export function decryptToken(stored: string, secret: string | undefined): string {
  const token = unseal(keyOf(secret), stored);
  if (token === null) throw new Error('the stored source token does not open under SOURCE_TOKEN_KEY');
  return token;
}
