/* global process, console, performance */
// The service for `npm start` and the api/worker/migrate roles: every .ts file of src, jobs, workers and
// migrations transpiled one to one into dist/ (same layout as tsc's outDir, so files read at run time
// resolve as before) by esbuild, which tsx already brings. No type-checking here: that is
// `npm run typecheck` (and CI). The entities need no decorator metadata (emitDecoratorMetadata is off).
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
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
if (!process.argv.includes('--quiet')) console.log(`built ${entryPoints.length} files into dist/ in ${Math.round(performance.now() - started)} ms`);
