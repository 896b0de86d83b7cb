/**
 * Issue 58's figures for a tree (`tsx scripts/shape-figures.ts [root]`, root defaults to the current
 * directory; run it on an old checkout to compare): tables written by several areas (the write scan
 * of check:tables), files of an area whose SQL names a table another area owns, files outside books
 * naming `markets` in SQL, hand `*Row` interfaces in src/services, hand row mappers (a function that
 * reads two or more snake_case fields of one of its parameters and builds an object), and entity
 * classes no code outside src/entities names. The owner map is this tree's src/services/tables.ts.
 * Issue 67's figures follow: calls that name a route by its path string (pages, MCP tools, doors),
 * authorization decided inside services (`not_authorized` refusals built outside services/access/policies;
 * the policy checks services still ask, in a transaction, counted apart), untyped `.query(` results in
 * src/services (the selector `scripts/lib/untypedQuery.mjs` shares with lint), loops between areas
 * (scripts/lib/areaGraph.ts), the pairs the duplicates tool reports, and the imports that cross
 * between the front doors (doors -> api, doors -> web, web -> api: each a climb a request's way
 * through createApp makes from one door into another's files).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import { TABLE_OWNERS } from '../src/services/tables';
import { entityTables, scanWrites, stripComments } from './lib/tableWrites';
import { walkTs } from './lib/walk';
import { execFileSync } from 'node:child_process';
import madge from 'madge';
import { ESLint } from 'eslint';
import { areaLoops } from './lib/areaGraph';
import { UNTYPED_QUERY } from './lib/untypedQuery.mjs';

const root = resolve(process.argv[2] ?? process.cwd());

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

/** Calls that reach a route by its path string: `apiGet(deps, v, '/metrics')`, a tool's `path: '/metrics'`. */
function pathStrings(file: string, src: string): number {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, true);
  let n = 0;
  const isPath = (e: ts.Node) => ts.isStringLiteralLike(e) && /^\/[a-z]/.test(e.text);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.arguments.some(isPath)) n++;
    else if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text === 'path' && isPath(node.initializer)) n++;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return n;
}

/** Import and export-from statements of a file, resolved to tree paths (relative specifiers only). */
function importsOf(file: string, src: string): string[] {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const st of sf.statements) {
    const spec = (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : null;
    if (spec?.startsWith('.')) out.push(join(dirname(file), spec).replace(/\\/g, '/'));
  }
  return out;
}

/**
 * Imports crossing between the front doors: from src/doors into src/api or src/web, from src/web into
 * src/api. An import of the route table (src/api/routes: a caller naming a route by its value, issue 67
 * item 1) is counted apart, as `routeTable`: it is the typed reference that replaced a path string.
 */
function doorImports() {
  const door = (f: string) => /^src\/(doors|web|api)(\/|$)/.exec(f)?.[1] ?? null;
  const crossings = { 'doors->api': 0, 'doors->web': 0, 'web->api': 0 } as Record<string, number>;
  let routeTable = 0;
  for (const f of files) {
    const from = door(f);
    if (from !== 'doors' && from !== 'web') continue;
    for (const target of importsOf(f, read(f))) {
      const key = `${from}->${door(target)}`;
      if (!(key in crossings)) continue;
      if (/^src\/api\/routes(\/|$)/.test(target)) routeTable++;
      else crossings[key]++;
    }
  }
  return { total: Object.values(crossings).reduce((a, b) => a + b, 0), ...crossings, routeTable };
}

/**
 * Calls that name a route by its path (issue 67 item 1, the figure lint now holds at 0): a caller's
 * call (apiGet, apiAct, apiRead, apiQuote, callRoute, routeNamed, a tool confirmation's read) given a
 * path string or template, and a tool spec's `path: '/...'` beside its method. Outside the route
 * files and the router (src/api/app.ts), in src and test.
 */
const CALLERS = new Set(['apiGet', 'apiAct', 'apiRead', 'apiQuote', 'callRoute', 'routeNamed', 'read']);
function routeCallsByPath(file: string, src: string): number {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, true);
  let n = 0;
  const pathText = (e: ts.Node) => (ts.isStringLiteralLike(e) ? e.text : ts.isTemplateExpression(e) ? e.head.text : null);
  const isPath = (e: ts.Node) => /^\/[a-z]/.test(pathText(e) ?? '');
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && CALLERS.has(node.expression.text) && node.arguments.some(isPath)) n++;
    else if (ts.isObjectLiteralExpression(node)) {
      const key = (name: string) => node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === name);
      const path = key('path');
      if (path && key('method') && key('name') && isPath(path.initializer)) n++;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return n;
}

async function shapeStep3() {
  const callers = [...files, ...walk(join(root, 'test'))].filter((f) => !f.startsWith('src/api/routes/') && f !== 'src/api/app.ts');
  const routeCalls = callers.map((f) => [f, routeCallsByPath(f, read(f))] as const).filter(([, n]) => n > 0);
  const doors = [...walk(join(root, 'src/web')), ...walk(join(root, 'src/api/mcp')), ...walk(join(root, 'src/doors'))];
  const byPath = doors.map((f) => [f, pathStrings(f, read(f))] as const).filter(([, n]) => n > 0);
  // A refusal decided in a service: a not_authorized error built there. The policy files (services/access/policies)
  // are where they belong; a service asking a policy's check (policies.x.requireY) is counted apart, as the
  // re-checks a transaction must do on the rows it reads.
  const policyFile = (f: string) => f.startsWith('src/services/access/policies/');
  const services = files.filter((f) => f.startsWith('src/services/'));
  const authz = services
    .filter((f) => !policyFile(f))
    .map((f) => [f, stripComments(read(f)).match(/DomainError\(\s*'not_authorized'|notAuthorized\(/g)?.length ?? 0] as const)
    .filter(([, n]) => n > 0);
  const asked = services
    .filter((f) => !policyFile(f))
    .map((f) => [f, stripComments(read(f)).match(/\bpolicies\.\w+\.require\w*\(|\brequire(?:SelfOrCreator|HeldChange)\(/g)?.length ?? 0] as const)
    .filter(([, n]) => n > 0);
  const policies = services.filter((f) => policyFile(f) && !/\/(index|rule)\.ts$/.test(f));
  const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: { files: ['**/*.ts'], languageOptions: { parser: (await import('typescript-eslint')).parser }, rules: { 'no-restricted-syntax': ['error', { selector: UNTYPED_QUERY, message: 'untyped' }] } } });
  const results = await eslint.lintFiles([join(root, 'src/services')]);
  const untyped = results.reduce((n, r) => n + r.messages.filter((m) => m.message === 'untyped').length, 0);
  const graph = await madge([join(root, 'src'), join(root, 'jobs'), join(root, 'workers')].filter((d) => walk(d).length), { fileExtensions: ['ts'], baseDir: root });
  const loops = areaLoops(graph.obj()).filter((l) => l.nodes.some((n) => n.startsWith('services/')));
  let duplicates = 'not run (the duplicates tool is not on this machine)';
  try {
    duplicates = execFileSync('duplicates', ['--repo', root, '--most', '1', '--seconds', '120'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    /* the tool is optional */
  }
  return {
    routesNamedByPath: { count: byPath.reduce((n, [, c]) => n + c, 0), files: byPath.length },
    callsNamingARouteByPath: { count: routeCalls.reduce((n, [, c]) => n + c, 0), at: routeCalls.map(([f, c]) => `${f} (${c})`) },
    authorizationInServices: { sites: authz.reduce((n, [, c]) => n + c, 0), files: authz.map(([f]) => f) },
    policyFiles: policies.length,
    policyChecksAskedInServices: { sites: asked.reduce((n, [, c]) => n + c, 0), files: asked.map(([f]) => f) },
    untypedQueryResults: untyped,
    areaLoops: loops.map((l) => l.nodes.join(' ')),
    duplicates,
    doorImports: doorImports(),
  };
}

void shapeStep3().then((step3) => console.log(
  JSON.stringify(
    {
      tablesWithSeveralWriters: { count: several.length, tables: several },
      filesNamingAnotherAreasTable: foreignSql.length,
      marketsInSqlOutsideBooks: { files: markets.files.size, areas: markets.areas.size },
      handRowInterfaces: rowInterfaces,
      handRowMappers: { count: mappers.length, at: mappers },
      entities: entities.size,
      unusedEntities: { count: unused.length, classes: unused },
      issue67: step3,
    },
    null,
    1,
  ),
));
