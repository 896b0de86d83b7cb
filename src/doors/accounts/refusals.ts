import { docUrl, type ErrorCode } from '../../errors';

/**
 * The account system (Better Auth) answers its refusals as {message, code} (its own codes, such as
 * INVALID_EMAIL_OR_PASSWORD); every error body under /api carries {error, code, doc_url} (spec §7.1).
 * Its own code stays in `reason`. An OAuth error ({error, error_description}, RFC 6749) keeps its
 * fields and gains code and doc_url.
 */
const BY_STATUS: Record<number, ErrorCode> = {
  401: 'account_refused',
  404: 'route_not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/** The account system's own codes that are ours too (raised by our hooks in services/accounts/auth.ts). */
const BY_REASON: Record<string, ErrorCode> = { RESET_MAIL_NOT_CONFIGURED: 'reset_mail_not_configured' };

const codeFor = (status: number, reason: unknown): ErrorCode =>
  (typeof reason === 'string' ? BY_REASON[reason] : undefined) ?? BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'account_refused');

/** The OAuth endpoints (RFC 6749, 7591): every refusal there carries error and error_description, which hosts show. */
export const isOAuthEndpoint = (path: string) => path.includes('/oauth2/');

/** The OAuth error code a refusal of ours is, by its status (too_many_requests: what MCP hosts' SDK names a 429). */
export function oauthErrorOf(status: number): string {
  if (status === 429) return 'too_many_requests';
  if (status === 401) return 'invalid_client';
  if (status >= 500) return status === 503 ? 'temporarily_unavailable' : 'server_error';
  return 'invalid_request';
}

/** A refusal of ours (the API's shape: error is the sentence) as an OAuth endpoint answers it. */
export function inOAuthShape(body: Record<string, unknown>, status: number): Record<string, unknown> {
  return { ...body, error: oauthErrorOf(status), error_description: body.error };
}

export async function refusalInOurShape(res: Response, oauth = false): Promise<Response> {
  if (res.status < 400) return res;
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: the sentence below says what happened
  }
  const { message, code: reason, ...rest } = body;
  const code = codeFor(res.status, reason);
  const ours = (): Record<string, unknown> => ({
          error: typeof message === 'string' && message ? sentence(message) : `The account system refused the request (${res.status}).`,
          code,
          doc_url: docUrl(code),
          ...(typeof reason === 'string' ? { reason } : {}),
          ...rest,
        });
  const shaped =
    typeof body.error === 'string'
      ? { ...body, code: typeof reason === 'string' ? reason : code, doc_url: docUrl(code) }
      : oauth
        ? inOAuthShape(ours(), res.status)
        : ours();
  const headers = new Headers(res.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  return new Response(JSON.stringify(shaped), { status: res.status, statusText: res.statusText, headers });
}

const sentence = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`);
