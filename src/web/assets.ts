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

/**
 * uPlot builds `new Intl.NumberFormat(navigator.language)` as it loads: a tag Intl rejects
 * (LANG=C.UTF-8 makes Chromium report en-US@posix) throws, and no chart draws. Around uPlot, such a
 * browser's language reads as en-US; afterwards it is the browser's again (app.js picks its own).
 */
const UPLOT_BEFORE =
  "(function(){try{new Intl.NumberFormat(navigator.language)}catch(e){try{Object.defineProperty(navigator,'language',{configurable:true,value:'en-US'})}catch(f){}}})();\n";
const UPLOT_AFTER = "\n(function(){try{if(Object.prototype.hasOwnProperty.call(navigator,'language'))delete navigator.language}catch(e){}})();\n";
const WRAP: Record<string, (body: Buffer) => Buffer> = {
  'uPlot.iife.min.js': (body) => Buffer.concat([Buffer.from(UPLOT_BEFORE), body, Buffer.from(UPLOT_AFTER)]),
};

const cache = new Map<string, Buffer>();

/** The file and its media type, or null when no such asset exists. */
export async function asset(name: string): Promise<{ body: Buffer; type: string } | null> {
  const where = FILES[name];
  if (!where) return null;
  let body = cache.get(name);
  if (!body) {
    body = await readFile(where());
    body = WRAP[name]?.(body) ?? body;
    cache.set(name, body);
  }
  return { body, type: TYPES[name.endsWith('.css') ? 'css' : 'js'] };
}
