/* global process, console, performance */
// The service for `npm start` and the api/worker/migrate roles: every .ts file of src, jobs, workers and
// migrations transpiled one to one into dist/ (same layout as tsc's outDir, so files read at run time
// resolve as before) by esbuild, which tsx already brings. No type-checking here: that is
// `npm run typecheck` (and CI). The entities need no decorator metadata (emitDecoratorMetadata is off).
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOTS = ['src', 'jobs', 'workers', 'migrations'];

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const started = performance.now();
const entryPoints = ROOTS.flatMap(sources);
// --if-stale (npm start's prestart): nothing to do when no source, tsconfig or this script changed
// since the last build's stamp, so a later start does not pay for a build.
const STAMP = join('dist', '.build-stamp');
const mtime = (p) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return -1;
  }
};
const newest = Math.max(...[...entryPoints, 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/build.mjs'].map(mtime));
if (process.argv.includes('--if-stale') && mtime(STAMP) >= newest) process.exit(0);
const { build } = await import('esbuild');
await build({
  entryPoints,
  outdir: 'dist',
  outbase: '.',
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  tsconfig: 'tsconfig.build.json',
  logLevel: 'warning',
});
writeFileSync(STAMP, `${entryPoints.length} files\n`);
if (!process.argv.includes('--quiet')) console.log(`built ${entryPoints.length} files into dist/ in ${Math.round(performance.now() - started)} ms`);
