import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every .ts file under `dir` (paths joined onto it); a missing folder has none. */
export function walkTs(dir: string, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) walkTs(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}
