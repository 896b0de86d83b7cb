/**
 * Issue 58's figures for a tree (`tsx scripts/shape-figures.ts [root]`, root defaults to the current
 * directory; run it on an old checkout to compare): tables written by several areas (the write scan
 * of check:tables), files of an area whose SQL names a table another area owns, files outside books
 * naming `markets` in SQL, hand `*Row` interfaces in src/services, hand row mappers (a function that
 * reads two or more snake_case fields of one of its parameters and builds an object), and entity
 * classes no code outside src/entities names. The owner map is this tree's src/services/tables.ts.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';
import { TABLE_OWNERS } from '../src/services/tables';
import { entityTables, scanWrites, stripComments } from './lib/tableWrites';
import { walkTs } from './lib/walk';

const root = process.argv[2] ?? process.cwd();

const walk = (dir: string) => walkTs(dir).map((p) => relative(root, p).replace(/\\/g, '/'));

const read = (f: string) => readFileSync(join(root, f), 'utf8');
const areaOf = (f: string) => (f.startsWith('src/services/') && f.split('/').length > 3 ? f.split('/')[2] : null);

/** Functions reading >= 2 snake_case fields of one parameter and building an object literal. */
function handMappers(file: string, src: string): string[] {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const isFn = (n: ts.Node): n is ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression | ts.MethodDeclaration =>
    ts.isFunctionDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isMethodDeclaration(n);
  const visit = (n: ts.Node): void => {
    if (isFn(n) && n.body) {
      const params = new Set(n.parameters.flatMap((p) => (ts.isIdentifier(p.name) ? [p.name.text] : [])));
      let snake = 0;
      let builds = false;
      const scan = (m: ts.Node): void => {
        if (m !== n && isFn(m)) return;
        if (ts.isPropertyAccessExpression(m) && ts.isIdentifier(m.expression) && params.has(m.expression.text) && /^[a-z]+(_[a-z0-9]+)+$/.test(m.name.text)) snake++;
        if (ts.isObjectLiteralExpression(m)) builds = true;
        ts.forEachChild(m, scan);
      };
      scan(n.body);
      if (snake >= 2 && builds) found.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

const files = walk(join(root, 'src'));
const entities = new Map<string, string>();
for (const f of files.filter((f) => f.startsWith('src/entities/'))) for (const [k, v] of entityTables(read(f))) entities.set(k, v);
const tables = new Set([...Object.keys(TABLE_OWNERS), ...entities.values()]);
const writers = new Map<string, Set<string>>();
const foreignSql: string[] = [];
const markets = { files: new Set<string>(), areas: new Set<string>() };
let rowInterfaces = 0;
const mappers: string[] = [];
for (const f of files) {
  const area = areaOf(f);
  if (!area) continue;
  const src = read(f);
  for (const w of scanWrites(src, tables, entities)) writers.set(w.table, (writers.get(w.table) ?? new Set()).add(area));
  const named = new Set<string>();
  for (const m of stripComments(src).matchAll(/\b(?:FROM|JOIN|INTO|UPDATE)\s+([a-z_][a-z0-9_]*)\b/g)) if (tables.has(m[1])) named.add(m[1]);
  if ([...named].some((t) => TABLE_OWNERS[t] && TABLE_OWNERS[t] !== area)) foreignSql.push(f);
  if (named.has('markets') && area !== 'books') {
    markets.files.add(f);
    markets.areas.add(area);
  }
  rowInterfaces += src.match(/\binterface \w*Row\b/g)?.length ?? 0;
  mappers.push(...handMappers(f, src));
}
const code = [...files, ...walk(join(root, 'jobs')), ...walk(join(root, 'workers'))]
  .filter((f) => !f.startsWith('src/entities/'))
  .map((f) => stripComments(read(f)))
  .join('\n');
const unused = [...entities.keys()].filter((c) => !new RegExp(`\\b${c}\\b`).test(code));
const several = [...writers].filter(([, a]) => a.size > 1).map(([t, a]) => `${t} (${[...a].sort().join(', ')})`);

console.log(
  JSON.stringify(
    {
      tablesWithSeveralWriters: { count: several.length, tables: several },
      filesNamingAnotherAreasTable: foreignSql.length,
      marketsInSqlOutsideBooks: { files: markets.files.size, areas: markets.areas.size },
      handRowInterfaces: rowInterfaces,
      handRowMappers: { count: mappers.length, at: mappers },
      entities: entities.size,
      unusedEntities: { count: unused.length, classes: unused },
    },
    null,
    1,
  ),
);
