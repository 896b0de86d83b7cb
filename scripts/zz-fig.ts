// Issue 58 figures for a tree: node figures.ts <root>. Uses the current scanner and owner map (from /work/wt58).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { entityTables, scanWrites, stripComments } from '/work/wt58/scripts/lib/tableWrites';
import { TABLE_OWNERS } from '/work/wt58/src/services/tables';
const root = process.argv[2];
const walk = (d: string, out: string[] = []): string[] => { for (const n of readdirSync(d)) { const p = join(d, n); if (statSync(p).isDirectory()) walk(p, out); else if (p.endsWith('.ts')) out.push(relative(root, p)); } return out; };
const files = walk(join(root, 'src'));
const entities = new Map<string, string>();
for (const f of files.filter((f) => f.startsWith('src/entities/'))) for (const [k, v] of entityTables(readFileSync(join(root, f), 'utf8'))) entities.set(k, v);
const tables = new Set([...Object.keys(TABLE_OWNERS), ...entities.values()]);
const areaOf = (f: string) => (f.startsWith('src/services/') && f.split('/').length > 3 ? f.split('/')[2] : null);
const writers = new Map<string, Set<string>>();
const foreignSqlFiles: string[] = []; const marketsFiles = new Set<string>(); const marketsAreas = new Set<string>();
for (const f of files) {
  const area = areaOf(f); if (!area) continue;
  const src = readFileSync(join(root, f), 'utf8');
  for (const w of scanWrites(src, tables, entities)) { if (!writers.has(w.table)) writers.set(w.table, new Set()); writers.get(w.table)!.add(area); }
  const text = stripComments(src);
  const named = new Set<string>();
  for (const m of text.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE)\s+([a-z_][a-z0-9_]*)\b/g)) if (tables.has(m[1])) named.add(m[1]);
  if ([...named].some((t) => TABLE_OWNERS[t] && TABLE_OWNERS[t] !== area)) foreignSqlFiles.push(f);
  if (named.has('markets') && area !== 'books') { marketsFiles.add(f); marketsAreas.add(area); }
}
const multi = [...writers].filter(([, a]) => a.size > 1).map(([t, a]) => `${t}(${[...a].join(',')})`);
// Entities imported by no code: the class name appears in no src/jobs/workers file outside src/entities.
const code = [...files, ...(() => { try { return walk(join(root, 'jobs')); } catch { return []; } })(), ...(() => { try { return walk(join(root, 'workers')); } catch { return []; } })()]
  .filter((f) => !f.startsWith('src/entities/')).map((f) => stripComments(readFileSync(join(root, f), 'utf8'))).join('\n');
const unused = [...entities.keys()].filter((c) => !new RegExp(`\\b${c}\\b`).test(code));
const handRows = files.filter((f) => f.startsWith('src/services/')).reduce((n, f) => n + (readFileSync(join(root, f), 'utf8').match(/\binterface \w*Row\b/g)?.length ?? 0), 0);
console.log(JSON.stringify({ entities: entities.size, unusedEntities: unused.length, unused, tablesWithSeveralWriterAreas: multi.length, multi, filesNamingAnotherAreasTableInSql: foreignSqlFiles.length, marketsInSqlOutsideBooks: { files: marketsFiles.size, areas: marketsAreas.size }, handRowInterfacesInServices: handRows }, null, 1));
