import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Koa from 'koa';

/**
 * The reference page (Swagger UI, served from node_modules: no CDN) at /api/reference. It reads
 * /api/openapi.json; it is a page for people, so it is not part of the API catalog itself.
 */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'init.js': 'application/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API reference: metric-priced proposals</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/reference/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/api/reference/swagger-ui-bundle.js"></script>
<script src="/api/reference/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  // Tags open collapsed: with every operation (over 120) expanded at once the page stalls.
  docExpansion: 'none',
  filter: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});
`;

const distDir = (): string => join(require.resolve('swagger-ui-dist/package.json'), '..');
const cache = new Map<string, Buffer>();

export async function serveReference(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
  if (ctx.path === '/api/reference' || ctx.path === '/api/reference/') {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
    return;
  }
  const m = /^\/api\/reference\/([\w.-]+)$/.exec(ctx.path);
  const type = m ? ASSETS[m[1]] : undefined;
  if (!m || !type) return next();
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.type = type;
  if (m[1] === 'init.js') {
    ctx.body = INIT;
    return;
  }
  let buf = cache.get(m[1]);
  if (!buf) {
    buf = await readFile(join(distDir(), m[1]));
    cache.set(m[1], buf);
  }
  ctx.body = buf;
}
