import type Koa from 'koa';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { readBounded } from './body';

/**
 * The one form-post skeleton of the pages (src/web), the account pages and the OAuth pages
 * (src/doors/accounts): the cross-site refusal, the bounded read of the urlencoded body, the act,
 * and the answer (usually a 303); a refusal goes to the door's own drawing of it.
 */

/** The largest form body a page reads (a comment or a proposal's text fits well inside). */
export const FORM_LIMIT = 64 * 1024;

const CROSS_SITE = 'This form only accepts posts from this service\'s own pages: nothing was done.';

/**
 * The body of a page's form (application/x-www-form-urlencoded, at most FORM_LIMIT bytes). Anything
 * else is refused with a sentence: a page's forms send nothing else.
 */
export async function readForm(ctx: Koa.Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new ApiError('unsupported_media_type', 'This page takes its own forms only (application/x-www-form-urlencoded).');
  }
  const raw = await readBounded(ctx, FORM_LIMIT, () => new ApiError('payload_too_large', `The form is over ${FORM_LIMIT / 1024} KB: nothing was done.`));
  return new URLSearchParams(raw);
}

/**
 * A form post must come from this service's own pages. A browser says where a request came from
 * (Sec-Fetch-Site, else Origin); a cross-site one is refused before its body is read. A request
 * naming neither is no browser's cross-site post: the session cookie is SameSite=Lax, which a
 * cross-site POST does not carry, so such a post acts with no session at all.
 */
export function refuseCrossSite(ctx: Koa.Context, publicBaseUrl: string, sentence = CROSS_SITE): void {
  const site = ctx.get('sec-fetch-site');
  const origin = ctx.get('origin');
  const own = new URL(publicBaseUrl).origin;
  // The request's own origin also counts (a service reached under another name than PUBLIC_BASE_URL).
  const self = `${ctx.protocol}://${ctx.host}`;
  // Sec-Fetch-Site decides when sent: under the service's Referrer-Policy no-referrer, a browser sends
  // "Origin: null" with its own pages' form posts, so Origin is only read from a browser without it.
  if (site ? site !== 'same-origin' && site !== 'none' : origin && origin !== own && origin !== self) {
    throw new ApiError('origin_not_allowed', sentence);
  }
}

/** Sends the browser on after a form acted (303: the next request is a GET). */
export function seeOther(ctx: Koa.Context, to: string): void {
  ctx.redirect(to);
  ctx.status = 303;
}

export interface FormPost {
  /** The configuration, read at each post (its PUBLIC_BASE_URL: a post from elsewhere is refused unread). */
  config: Pick<Config, 'PUBLIC_BASE_URL'>;
  /** The cross-site refusal's sentence, when the door says more than the default. */
  crossSite?: string;
  /** Acts on the form's values and answers (a redirect with seeOther, or a page). */
  act: (ctx: Koa.Context, values: URLSearchParams, started: number) => Promise<void>;
  /**
   * Draws a refusal (values: null when it came before the form was read); it rethrows what it does
   * not draw. Without it every refusal goes to the answer edge (the one error shape).
   */
  refused?: (ctx: Koa.Context, err: unknown, values: URLSearchParams | null, started: number) => Promise<void>;
}

/** A form post's handler: refused when cross-site, read (urlencoded, bounded), acted, answered. */
export function handleForm(spec: FormPost): Koa.Middleware {
  return async (ctx) => {
    const started = performance.now();
    let values: URLSearchParams | null = null;
    try {
      refuseCrossSite(ctx, spec.config.PUBLIC_BASE_URL, spec.crossSite);
      values = await readForm(ctx);
      await spec.act(ctx, values, started);
    } catch (err) {
      if (!spec.refused) throw err;
      await spec.refused(ctx, err, values, started);
    }
  };
}
