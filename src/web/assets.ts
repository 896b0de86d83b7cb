import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The pages' static files: uPlot from node_modules (no CDN) and the pages' own script and styles
 * (src/web/assets, found from here whether running from src/ or from the compiled dist/src/).
 */
const TYPES = { js: 'application/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

function ownAssetsDir(): string {
  for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'src', 'web', 'assets');
    if (existsSync(join(candidate, 'app.js'))) return candidate;
  }
  throw new Error('src/web/assets/app.js is missing: the pages cannot be served without it.');
}

const uplotDir = (): string => join(require.resolve('uplot/package.json'), '..', 'dist');

const FILES: Record<string, () => string> = {
  'app.js': () => join(ownAssetsDir(), 'app.js'),
  'app.css': () => join(ownAssetsDir(), 'app.css'),
  'uPlot.iife.min.js': () => join(uplotDir(), 'uPlot.iife.min.js'),
  'uPlot.min.css': () => join(uplotDir(), 'uPlot.min.css'),
};

const cache = new Map<string, Buffer>();

/** The file and its media type, or null when no such asset exists. */
export async function asset(name: string): Promise<{ body: Buffer; type: string } | null> {
  const where = FILES[name];
  if (!where) return null;
  let body = cache.get(name);
  if (!body) {
    body = await readFile(where());
    cache.set(name, body);
  }
  return { body, type: TYPES[name.endsWith('.css') ? 'css' : 'js'] };
}
