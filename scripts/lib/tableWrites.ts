/**
 * Static scan for table writes in one TypeScript file (used by scripts/check-tables.ts).
 *
 * What it sees: SQL text anywhere in the file (string or template literal) with
 * `INSERT INTO t`, `UPDATE t [AS x] SET`, `DELETE FROM t`, `TRUNCATE [TABLE] t`, `MERGE INTO t`
 * (an `ON CONFLICT ... DO UPDATE` belongs to its INSERT, so it is counted there), and TypeORM writes
 * naming an entity class: `getRepository(E).save/insert/update/upsert/delete/remove/...`, a variable
 * holding `getRepository(E)` then `.save(...)` etc., `manager.insert/update/upsert/delete/save/remove(E, ...)`,
 * `.insert().into(E)`, `.update(E)` and `.delete().from(E)` on a query builder.
 * What it does not see (its limits): a table name built at run time (`INSERT INTO ${name}`), an entity
 * instance saved without its class named (`m.save(obj)`), SQL kept in another file's constant and
 * imported (that counts as the exporting file's write, which is the rule: the owner exports the fragment).
 * Comments are stripped first, so prose such as "update the markets" is not a write.
 */

export interface TableWrite {
  table: string;
  line: number;
  how: string;
}

const TYPEORM_WRITES = 'save|insert|update|upsert|delete|remove|softDelete|softRemove|restore|increment|decrement|clear';

/** Blank out comments, keeping line numbers (and leaving `//` inside strings such as URLs alone). */
export function stripComments(src: string): string {
  let out = '';
  let i = 0;
  let quote: string | null = null;
  while (i < src.length) {
    const c = src[i];
    const n = src[i + 1];
    if (quote) {
      out += c;
      if (c === '\\') {
        out += n ?? '';
        i += 2;
        continue;
      }
      if (c === quote) quote = null;
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      quote = c;
      out += c;
      i++;
      continue;
    }
    if (c === '/' && n === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && n === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

const lineOf = (src: string, index: number): number => src.slice(0, index).split('\n').length;

/** Entity class name -> table name, read from `@Entity('table') export class Name` declarations. */
export function entityTables(src: string): Map<string, string> {
  const map = new Map<string, string>();
  // The class declared next after the decorator (other decorators, with any arguments, may sit between).
  const re = /@Entity\(\s*['"]([a-z_][a-z0-9_]*)['"][\s\S]*?export\s+class\s+(\w+)/g;
  for (const m of src.matchAll(re)) map.set(m[2], m[1]);
  return map;
}

/** Every write to a known table in one file's source. */
export function scanWrites(source: string, tables: ReadonlySet<string>, entities: ReadonlyMap<string, string>): TableWrite[] {
  const src = stripComments(source);
  const found: TableWrite[] = [];
  const add = (table: string | undefined, index: number, how: string) => {
    if (table && tables.has(table)) found.push({ table, line: lineOf(src, index), how });
  };
  const sql: Array<[RegExp, string]> = [
    [/\binsert\s+into\s+"?([a-z_][a-z0-9_]*)"?/gi, 'INSERT INTO'],
    [/\bupdate\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?(?:\s+(?:as\s+)?[a-z_][a-z0-9_]*)?\s+set\b/gi, 'UPDATE'],
    [/\bdelete\s+from\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi, 'DELETE FROM'],
    [/\btruncate\s+(?:table\s+)?(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi, 'TRUNCATE'],
    [/\bmerge\s+into\s+"?([a-z_][a-z0-9_]*)"?/gi, 'MERGE INTO'],
  ];
  for (const [re, how] of sql) for (const m of src.matchAll(re)) add(m[1].toLowerCase(), m.index ?? 0, how);

  const entity = (name: string) => entities.get(name);
  // getRepository(E).write(...)
  for (const m of src.matchAll(new RegExp(`getRepository\\(\\s*(\\w+)\\s*\\)\\s*\\.\\s*(${TYPEORM_WRITES})\\s*\\(`, 'g')))
    add(entity(m[1]), m.index ?? 0, `repository ${m[2]}`);
  // const repo = ...getRepository(E); repo.write(...)
  for (const m of src.matchAll(/\b(?:const|let)\s+(\w+)\s*=\s*[\w.]*getRepository\(\s*(\w+)\s*\)/g)) {
    const [, v, e] = m;
    for (const w of src.matchAll(new RegExp(`\\b${v}\\s*\\.\\s*(${TYPEORM_WRITES})\\s*\\(`, 'g'))) add(entity(e), w.index ?? 0, `repository ${w[1]}`);
  }
  // manager.write(E, ...)
  for (const m of src.matchAll(new RegExp(`\\.\\s*(${TYPEORM_WRITES})\\s*\\(\\s*(\\w+)\\s*,`, 'g')))
    add(entity(m[2]), m.index ?? 0, `manager ${m[1]}`);
  // query builder: .insert().into(E), .update(E), .delete().from(E)
  for (const m of src.matchAll(/\.insert\(\s*\)\s*\.into\(\s*(\w+)/g)) add(entity(m[1]), m.index ?? 0, 'query builder insert');
  for (const m of src.matchAll(/\.update\(\s*(\w+)\s*\)/g)) add(entity(m[1]), m.index ?? 0, 'query builder update');
  for (const m of src.matchAll(/\.delete\(\s*\)\s*\.from\(\s*(\w+)/g)) add(entity(m[1]), m.index ?? 0, 'query builder delete');
  return found;
}

/** The area a file belongs to: `src/services/<area>/...` -> area; anything else -> its path (never an owner). */
export function areaOf(file: string): string {
  const m = /^src\/services\/([^/]+)\//.exec(file.replace(/\\/g, '/'));
  return m ? m[1] : file;
}

export interface Violation extends TableWrite {
  file: string;
  area: string;
  owner: string | undefined;
}

/** Writes by a file whose area does not own the table (or to a table the map does not name). */
export function violations(file: string, writes: TableWrite[], owners: Readonly<Record<string, string>>): Violation[] {
  const area = areaOf(file);
  return writes.filter((w) => owners[w.table] !== area).map((w) => ({ ...w, file, area, owner: owners[w.table] }));
}
