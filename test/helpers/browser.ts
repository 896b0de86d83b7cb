import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';

/** A Chromium for the browser tests and what its process needs in the environment. */
export interface ChromiumBinary {
  executablePath: string;
  env: Record<string, string>;
}

function packageDir(): string {
  // The package exports only its entry point; its directory is the one above that holds its package.json.
  for (let dir = dirname(require.resolve('@sparticuz/chromium')); dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'chromium.br'))) return dir;
  }
  throw new Error('@sparticuz/chromium is installed without its bin/chromium.br: run npm install again.');
}

function untar(archive: string, into: string): void {
  const r = spawnSync('tar', ['-x', '-C', into], { input: brotliDecompressSync(readFileSync(archive)), maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`Unpacking ${archive} with tar failed: ${String(r.stderr || r.error?.message).trim()}.`);
}

/**
 * CHROMIUM_PATH when set; otherwise the Chromium that the npm package @sparticuz/chromium (a
 * devDependency) ships inside its tarball, with the NSS libraries and fonts it needs: unpacked once
 * per version into the temp directory (about 200 MB, a second or two), so `npm install && npm test`
 * is all a new machine needs. Anything else is one sentence saying what to do: never a skip.
 */
export function chromiumBinary(): ChromiumBinary {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH is ${fromEnv}, which does not exist: point it at a Chromium or Chrome binary, or unset it to use the one from @sparticuz/chromium.`);
    return { executablePath: fromEnv, env: {} };
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`The Chromium from @sparticuz/chromium runs on Linux x64 only, not ${process.platform} ${process.arch}: set CHROMIUM_PATH to a Chromium or Chrome binary.`);
  }
  const pkg = packageDir();
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  const dest = join(tmpdir(), `mpps-chromium-${version}`);
  const result = (): ChromiumBinary => ({
    executablePath: join(dest, 'chromium'),
    env: { LD_LIBRARY_PATH: [join(dest, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'), FONTCONFIG_PATH: join(dest, 'fonts') },
  });
  if (existsSync(join(dest, 'chromium'))) return result();
  // Unpack beside the final place and rename: a run started meanwhile sees all of it or nothing.
  const partial = `${dest}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(join(partial, 'fonts'), { recursive: true });
  try {
    writeFileSync(join(partial, 'chromium'), brotliDecompressSync(readFileSync(join(pkg, 'bin', 'chromium.br'))));
    chmodSync(join(partial, 'chromium'), 0o755);
    untar(join(pkg, 'bin', 'al2023.tar.br'), partial); // lib/: libnss3, libnspr4, libexpat
    untar(join(pkg, 'bin', 'fonts.tar.br'), join(partial, 'fonts'));
    // The shipped fonts.conf names Lambda's paths; this one names the unpacked fonts.
    writeFileSync(
      join(partial, 'fonts', 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dest, 'fonts', 'fonts')}</dir>\n  <cachedir>${join(dest, 'fonts', 'cache')}</cachedir>\n</fontconfig>\n`,
    );
    renameSync(partial, dest);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(dest, 'chromium'))) throw err; // else a run started meanwhile unpacked it first
  }
  return result();
}

/**
 * A headless Chromium (chromiumBinary()) as the browser tests and bench/pages.ts run it. The caller
 * closes it.
 */
export function launchChromium(): Promise<Browser> {
  const { executablePath, env } = chromiumBinary();
  return chromium.launch({
    executablePath,
    env: { ...process.env, ...env } as Record<string, string>,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage'],
  });
}

/** What a page load cost: the server's render time, the browser's first contentful paint and DOM ready, and the scripts it ran. */
export interface PageFigures {
  /** The Server-Timing header's dur (the render, src/web/index.ts); NaN when the header is missing. */
  serverMs: number;
  /** First contentful paint from the navigation's start; NaN when none was seen within pageFigures' wait. */
  firstPaintMs: number;
  domReadyMs: number;
  scriptBytes: number;
}

/** The figures of a page just loaded by `page.goto` (its answer `res`); a first paint not seen within `paintWaitMs` is NaN. */
export async function pageFigures(page: Page, res: Response | null, paintWaitMs = 2000): Promise<PageFigures> {
  const serverMs = Number(/dur=([\d.]+)/.exec(res?.headers()['server-timing'] ?? '')?.[1] ?? NaN);
  // Browser-side code as text: this project's TypeScript has no DOM library.
  const nav = (await page.evaluate(`new Promise((resolve) => {
    const done = (paint) => {
      const n = performance.getEntriesByType('navigation')[0];
      const scripts = performance.getEntriesByType('resource').filter((r) => r.initiatorType === 'script');
      resolve({ domReadyMs: n.domContentLoadedEventEnd, firstPaintMs: paint, scriptBytes: scripts.reduce((s, r) => s + r.decodedBodySize, 0) });
    };
    new PerformanceObserver((list) => {
      const fcp = list.getEntries().find((e) => e.name === 'first-contentful-paint');
      if (fcp) done(fcp.startTime);
    }).observe({ type: 'paint', buffered: true });
    setTimeout(() => done(NaN), ${paintWaitMs});
  })`)) as Omit<PageFigures, 'serverMs'>;
  return { serverMs, ...nav };
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
/** The impacts that fail a page's accessibility check. */
export const AXE_FAILING = new Set(['serious', 'critical']);

export interface AxeResult {
  passes: { id: string }[];
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[];
}

/** axe-core on the page as it stands: the source evaluated (the pages' CSP refuses an inline script tag, not the debugger's evaluate). */
export async function axe(page: Page): Promise<AxeResult> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  return (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as AxeResult;
}
