import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { UNTYPED_QUERY } from './scripts/lib/untypedQuery.mjs';

// Import bans by layer. ESLint keeps only the last `no-restricted-imports` that matches a file, so
// each block below lists every ban that applies to its files.
const noApi = { group: ['**/api/app', '**/api/routes/*', '**/api/middleware/*'], message: 'Nothing imports from api/ except main.ts; callers take routes from the route table (api/routes), never from one of its files.' };
const pure = {
  group: ['typeorm', 'ioredis', 'koa', '@koa/*', 'ethers', 'bullmq', 'pg', 'node:fs', 'node:net', 'node:http'],
  message: 'src/domain is pure: no I/O.',
};
const noEdge = {
  group: ['koa', '@koa/*', 'better-auth/node'],
  message: 'Services see a resolved principal, never a request: reading headers and cookies and answering redirects is the front doors\' (src/doors, src/api).',
};
const recipe = 'Routes are recipes; workers are thin: call a service use case (src/services/<area>), which owns its transaction and its SQL.';
const noDb = { group: ['**/db', '**/db/**', 'typeorm', 'typeorm/*', 'pg', 'pg/*'], message: recipe };
const noDoors = {
  group: ['**/web', '**/web/**', '**/doors', '**/doors/**'],
  message: 'The API is one front door beside the pages, the account system and MCP (src/doors mounts them): it imports none of them.',
};
// src/edge (issue 67) is the neutral module under the front doors: the one bounded body reader,
// form-post skeleton and page headers that web and doors share. It imports none of them.
const edgeIsNeutral = {
  regex: '^(\\.\\./)+(web|doors|api)(/.*)?$',
  message: 'src/edge is shared by the front doors (src/web, src/doors, src/api): it imports none of them.',
};
const webNoDoors = { group: ['**/doors', '**/doors/**'], message: 'The pages are one front door beside the account edge (src/doors/accounts): they import none of src/doors.' };
const noEntities = {
  group: ['**/entities', '**/entities/**'],
  message: 'src/api shows plain rows: take the row type its service exports (e.g. WorkspaceRow), never a TypeORM entity.',
};

// An area is used through its index (src/services/<area>/index.ts): a file of another area is its own
// business, and an import of it is an edge the area-level cycle check (check:cycles) would see late.
const deepArea = { regex: '(^|/)services/[^/]+/(?!index$)[^/]+$', message: 'Import another area through its index (services/<area>), not one of its files.' };
const deepSibling = { regex: '^\\.\\./[^/.]+/(?!index$)[^/]+$', message: 'Import another area through its index (../<area>), not one of its files.' };

// The route table (issue 67): a caller names a route by its value (src/api/routes), never by its
// path, so a renamed route or field fails to compile. ESLint keeps only the last `no-restricted-syntax`
// that matches a file, so every block that sets it lists these too.
const byPathMessage = 'Name the route by its value from the route table (src/api/routes), e.g. apiRead(deps, v, getMetricsById, { params: { id } }), never by its path: a renamed route then fails to compile.';
const byPath = [
  { selector: "CallExpression[callee.name=/^(callRoute|apiRead|apiAct|apiQuote)$/] > :matches(Literal[value=/^\\//], TemplateLiteral)", message: byPathMessage },
  { selector: "CallExpression[callee.name='routeNamed']", message: byPathMessage },
];

const untypedQuery = 'TypeORM answers `.query(` untyped: read rows with rows<T>() / firstRow<T>() (db/queryRows), counts of an UPDATE or DELETE with changedRows(); the type says what pg returns (int8 and numeric as strings).';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'coverage/**', '*.config.js', '*.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // CommonJS helpers run by node directly (the test chain's child process).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-eval': 'error',
    },
  },
  {
    files: ['src/**/*.ts', 'jobs/**/*.ts', 'workers/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepArea] }] },
  },
  {
    files: ['src/**/*.ts', 'jobs/**/*.ts', 'workers/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...byPath] },
  },
  {
    files: ['src/services/**/*.ts', 'jobs/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noApi, noEdge, deepArea] }] },
  },
  {
    // domain/ is pure: no I/O libraries.
    files: ['src/domain/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [pure, noApi] }] },
  },
  {
    files: ['src/services/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noApi, noEdge, deepArea, deepSibling] }] },
  },
  {
    // Typed query results (issue 67): a `.query(` answer TypeORM types `any` is read through db/queryRows
    // (rows<T>, firstRow<T>, changedRows), everywhere in src/services.
    files: ['src/services/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', { selector: UNTYPED_QUERY, message: untypedQuery }, ...byPath] },
  },
  {
    // Routes are recipes; workers are thin: no db/, no typeorm, no SQL, no transactions.
    files: ['src/api/**/*.ts', 'workers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [noDb, deepArea] }],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression > MemberExpression.callee[property.name='query']", message: `No SQL here (.query). ${recipe}` },
        { selector: "MemberExpression[property.name='ds']", message: `No data source here (.ds / deps.ds). ${recipe}` },
        { selector: "CallExpression[callee.name='inTransaction']", message: `No transactions here (inTransaction). ${recipe}` },
        { selector: "Identifier[name=/^(EntityManager|DataSource|QueryRunner)$/]", message: `No TypeORM handles here. ${recipe}` },
        { selector: "TSImportType[argument.literal.value=/^typeorm/]", message: `No typeorm types here. ${recipe}` },
        ...byPath,
      ],
    },
  },
  {
    // api/ sees no entities: presenters take the services' plain rows; it imports no other front door.
    files: ['src/api/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noDb, noEntities, noDoors, deepArea] }] },
  },
  {
    files: ['workers/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noDb, noApi, deepArea] }] },
  },
  {
    files: ['src/edge/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [edgeIsNeutral, deepArea] }] },
  },
  {
    // web/ (the pages) reads only through the API's routes in process (src/api/dispatch): no db/,
    // no typeorm, no entities, no services (a service call would skip the API's access checks),
    // and none of api/'s app, routes or middleware.
    files: ['src/web/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noDb,
            noEntities,
            noApi,
            webNoDoors,
            { group: ['**/services', '**/services/**'], message: 'Pages read through the API in process (src/web/api.ts apiRead with a route of the table), never a service directly: the API decides what a visitor may see.' },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression > MemberExpression.callee[property.name='query']", message: `No SQL here (.query). ${recipe}` },
        { selector: "MemberExpression[property.name='ds']", message: `No data source here (.ds / deps.ds). ${recipe}` },
        ...byPath,
      ],
    },
  },
  {
    // The pages' browser script (served as is, no build step).
    files: ['src/web/assets/**/*.js'],
    languageOptions: { sourceType: 'script', ecmaVersion: 2020, globals: globals.browser },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
