/**
 * Fails when a file writes a table its area does not own (run by .ci/run after check:cycles).
 * The map is src/services/tables.ts; the scan and its limits are in scripts/lib/tableWrites.ts.
 * Another area that must write the table calls the owner's use case, or composes a SQL fragment the
 * owner exports (the fragment's text lives in the owner's file, so the write is the owner's).
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { TABLE_OWNERS } from '../src/services/tables';
import { entityTables, scanWrites, violations, type Violation } from './lib/tableWrites';
import { walkTs as walk } from './lib/walk';

const ROOTS = ['src', 'jobs', 'workers'];
// Entities describe tables; migrations create them. Neither is a write by an area.
const SKIP = [/^src\/entities\//, /^migrations\//];

export function checkTree(root: string): { violations: Violation[]; unmapped: string[]; files: number; writes: number } {
  const files = ROOTS.flatMap((r) => walk(join(root, r))).map((f) => relative(root, f).replace(/\\/g, '/'));
  const entities = new Map<string, string>();
  for (const f of files.filter((f) => f.startsWith('src/entities/'))) for (const [k, v] of entityTables(readFileSync(join(root, f), 'utf8'))) entities.set(k, v);
  const unmapped = [...new Set(entities.values())].filter((t) => !(t in TABLE_OWNERS)).sort();
  const tables = new Set([...Object.keys(TABLE_OWNERS), ...entities.values()]);
  const found: Violation[] = [];
  let writes = 0;
  for (const f of files) {
    if (SKIP.some((re) => re.test(f))) continue;
    const w = scanWrites(readFileSync(join(root, f), 'utf8'), tables, entities);
    writes += w.length;
    found.push(...violations(f, w, TABLE_OWNERS));
  }
  return { violations: found, unmapped, files: files.length, writes };
}

if (require.main === module) {
  const r = checkTree(process.cwd());
  for (const t of r.unmapped) console.error(`table ${t} has no owner in src/services/tables.ts`);
  for (const v of r.violations)
    console.error(`${v.file}:${v.line} ${v.how} ${v.table}: owned by ${v.owner ?? 'no area'}, written from ${v.area}; call the owner's use case or compose its exported fragment`);
  if (r.unmapped.length || r.violations.length) process.exit(1);
  console.log(`every table written only by its owner (${r.writes} writes in ${r.files} files)`);
}
