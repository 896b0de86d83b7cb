import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config';

/** Where the generated secret lives when AUTH_SECRET_FILE names no place: beside the embedded data (.data/auth-secret by default). */
export const secretFileOf = (cfg: Pick<Config, 'AUTH_SECRET_FILE' | 'EMBEDDED_PG_DIR'>) => resolve(cfg.AUTH_SECRET_FILE ?? join(dirname(cfg.EMBEDDED_PG_DIR), 'auth-secret'));

export interface KeptSecret {
  config: Config;
  /** How the secret came, for the start-up line (never the secret itself). */
  said: string;
}

/**
 * The account system's secret (sessions, the signing key's encryption). AUTH_SECRET wins; without it
 * (production refused that in loadConfig) the instance generates one the first time and keeps it in
 * a file (mode 0600), read again on every later start, so sign-ins and connections outlive a restart.
 */
export function keepAuthSecret(cfg: Config): KeptSecret {
  if (cfg.AUTH_SECRET) return { config: cfg, said: 'AUTH_SECRET' };
  if (cfg.authSecret) return { config: cfg, said: "the test runs' fixed secret" };
  const file = secretFileOf(cfg);
  let secret = readSecret(file);
  let said = `generated earlier, kept in ${file}`;
  if (!secret) {
    mkdirSync(dirname(file), { recursive: true });
    try {
      // 'wx': a second process starting at the same moment reads the first one's instead of replacing it.
      writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
      said = `generated now and kept in ${file}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    secret = readSecret(file);
  }
  if (!secret || secret.length < 32) throw new Error(`${file} holds no usable secret (32+ characters): remove it to generate a new one, or set AUTH_SECRET.`);
  return { config: { ...cfg, authSecret: secret }, said };
}

function readSecret(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
