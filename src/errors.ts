import { withCredits } from './domain/money';
import { readableNumbers } from './domain/readable';

/**
 * The error catalog (spec §7 plus the codes this service adds). A published code never changes
 * meaning; retired codes stay listed so nobody reuses them, and are never thrown.
 */
export const ERROR_CATALOG = {
  // spec §7
  proposal_closed: { status: 400, text: 'The proposal was decided or its deadline passed; buys and sells are both refused.' },
  insufficient_balance: { status: 400, text: 'Not enough credits; the body carries balance and cost (409 on transfers and credit moves).' },
  insufficient_shares: { status: 400, text: 'Not enough shares to sell; the body carries available.' },
  trade_too_small: { status: 400, text: 'The trade is below the minimum (0.000001 credits spent or shares sold).' },
  market_not_found: { status: 404, text: 'No such market in this workspace.' },
  market_resolved: { status: 400, text: 'The market has resolved and accepts no trades.' },
  market_voided: { status: 400, text: 'The market was voided and accepts no trades.' },
  market_closed: { status: 400, text: 'The market is closed; sells still work.' },
  market_unfunded: { status: 400, text: 'The book has no liquidity yet; retry once someone funds it (POST /predictions/markets/{id}/fund, or the owner refreshes).' },
  idempotency_key_reuse: { status: 409, text: 'The Idempotency-Key was already used for a different request (another endpoint or another body).' },
  price_moved: { status: 409, text: 'The price guard refused the trade; the body carries consensus and limit.' },
  identity_required: { status: 403, text: 'This act needs an identity: register or send a key.' },
  not_authorized: { status: 403, text: 'The identity lacks a capability here; the body carries requiredCapabilities.' },
  external_proposals_disabled: { status: 403, text: 'This workspace takes proposals from its owner and admins only.' },
  crosses_own_order: { status: 409, text: 'Retired, never returned: opposing limit orders are matched.', retired: true },
  market_settling: { status: 400, text: 'Retired, never returned: a market past its period keeps trading until its reading arrives.', retired: true },
  workspace_not_public: { status: 400, text: 'Retired, never returned: non-public floors trade for members whose groups grant trade.', retired: true },
  // added by this service
  authentication_required: { status: 401, text: 'No credentials were sent; send X-Agent-Key or X-API-Key.' },
  order_not_found: { status: 404, text: 'No such limit order of yours in this workspace.' },
  order_not_open: { status: 409, text: 'The limit order is no longer open (filled, cancelled or expired); the body carries status.' },
  invalid_credentials: { status: 401, text: 'The key sent is unknown or revoked.' },
  session_required: { status: 403, text: 'Only a browser session may do this (sign in with email and password); no key or key scope can be granted it.' },
  scope_denied: { status: 403, text: 'The key is valid but its scopes do not cover this endpoint; the body carries requiredScopes.' },
  workspace_locked: { status: 403, text: 'The key is locked to another workspace.' },
  workspace_required: { status: 400, text: 'This endpoint is workspace-scoped: send X-Workspace-Id (id or slug).' },
  workspace_not_found: { status: 404, text: 'No such workspace, or it is not visible to the caller.' },
  not_found: { status: 404, text: 'No such resource in this workspace.' },
  route_not_found: { status: 404, text: 'No such endpoint; GET /api/help lists them all.' },
  method_not_allowed: { status: 405, text: 'The path exists but not with this method; the Allow header and the body\'s allow list the methods it takes.' },
  account_refused: { status: 400, text: 'The account system (sign-up, sign-in, sign-out, password reset) refused; the status says how (401: wrong email or password), the body\'s reason carries its own code (e.g. INVALID_EMAIL_OR_PASSWORD).' },
  validation_failed: { status: 400, text: 'The request did not match the endpoint schema; the body carries issues.' },
  malformed_json: { status: 400, text: 'The body is not valid JSON.' },
  unsupported_media_type: { status: 415, text: 'Send the body as application/json.' },
  payload_too_large: { status: 413, text: 'The body is over 1 MB.' },
  nickname_taken: { status: 409, text: 'The nickname (or agent id) is already registered, compared case-insensitively.' },
  conflict: { status: 409, text: 'The request conflicts with the current state; the sentence says how.' },
  unknown_help_section: { status: 400, text: 'No such help section; the body lists the real ones.' },
  formula_invalid: { status: 400, text: 'The formula does not parse or names an unknown metric; the body carries position.' },
  formula_cycle: { status: 400, text: 'The formula would make metrics depend on themselves; the body carries cycle.' },
  rate_limited: { status: 429, text: 'Too many requests; wait for Retry-After seconds.', retryable: true },
  onboarding_paused: { status: 403, text: 'Onboarding is paused; the body carries the waitlist address.' },
  treasury_not_configured: { status: 503, text: 'The treasury is not configured on this instance.' },
  reset_mail_not_configured: { status: 503, text: 'This instance sends no mail (no SMTP_URL), so it cannot send a password reset link; ask its operator.' },
  deposit_duplicate: { status: 409, text: 'This transaction was already submitted as a deposit; the body carries the first record when the caller may see it (its participant, that participant\'s owner, the operator).' },
  grant_taken: { status: 409, text: 'The sign-up grant was already paid to this participant: it is paid once per person.' },
  grant_unavailable: { status: 409, text: 'This instance gives no sign-up grant (SIGNUP_CREDITS is 0): get credits with a deposit or a transfer.' },
  wallet_required: { status: 400, text: 'Register a wallet first (PUT /agents/{id}/wallet): deposits must come from it and withdrawals go to it.' },
  funds_move_forbidden: { status: 403, text: 'The master key cannot move funds: transfers and spending are by the participant itself.' },
  trade_pending: { status: 503, text: 'The trade is queued but its outcome is not known yet; retry with the same Idempotency-Key.', retryable: true },
  refresh_pending: { status: 503, text: 'The horizon pass is queued but did not finish in time (its queue was away, or busy); it still runs. Retry after Retry-After seconds.', retryable: true },
  order_pending: { status: 503, text: 'The order (or its cancellation) is queued on its market but its outcome is not known yet; retry with the same Idempotency-Key after Retry-After seconds.', retryable: true },
  void_pending: { status: 503, text: 'The void is queued on the market but did not finish in time; it still runs. Retry after Retry-After seconds.', retryable: true },
  trade_not_applied: { status: 503, text: 'The trade was lost before it ran and nothing was applied; retry with the same Idempotency-Key to run it.', retryable: true },
  service_unavailable: { status: 503, text: 'A database or queue connection failed for a moment; nothing was half-written. Retry after Retry-After seconds (with the same Idempotency-Key for money moves).', retryable: true },
  source_path_invalid: { status: 400, text: 'The path or ref is refused (a .. or . segment, a backslash, a leading slash, a control character); the sentence says which.' },
  source_file_too_large: { status: 413, text: 'The file is larger than this instance serves (SOURCE_MAX_FILE_BYTES); the body carries size and limit.' },
  source_upstream_failed: { status: 502, text: 'The repository host refused or failed (a bad token, refused access, an outage, no connection); the body carries upstreamStatus (0: no answer). Its body is never passed on.' },
  source_upstream_invalid: { status: 502, text: 'The repository host answered with something other than the JSON its API sends (an HTML page, say): GITHUB_API_URL may name the site rather than its API (GitHub Enterprise needs /api/v3).' },
  source_upstream_redirect: { status: 502, text: 'The repository host answered with a redirect; the bridge follows none. Point GITHUB_API_URL at the API itself, or correct the repository name.' },
  source_upstream_refused: { status: 502, text: 'The repository host resolves to a loopback, private, link-local or multicast address, which the bridge does not reach (the operator allows it with SOURCE_ALLOW_PRIVATE).' },
  source_upstream_tls: { status: 502, text: "The repository host's TLS certificate could not be verified; the body carries tlsError." },
  source_upstream_timeout: { status: 503, text: 'The repository host did not answer within SOURCE_FETCH_TIMEOUT_MS; retry after Retry-After seconds.', retryable: true },
  source_upstream_rate_limited: { status: 503, text: "The repository host's rate limit is spent; retry after Retry-After seconds (the body carries retryAfter). A token raises the limit.", retryable: true },
  source_token_unreadable: { status: 409, text: 'The stored repository token can no longer be unsealed (SOURCE_TOKEN_KEY changed): put the token again with PUT /sources/{id} { token }, or remove it with { token: null }.' },
  source_token_key_missing: { status: 503, text: 'This instance has no SOURCE_TOKEN_KEY, so it cannot store a repository token; send none (public repositories) or ask the operator.' },
  origin_not_allowed: { status: 403, text: 'A browser page of another origin called /mcp; only the origins the operator allows may (MCP_ALLOWED_ORIGINS).' },
  internal_error: { status: 500, text: 'Something failed on our side; the request id identifies it in the logs.' },
} as const satisfies Record<string, { status: number; text: string; retired?: boolean; retryable?: boolean }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** Codes a client should retry (same request, same Idempotency-Key); every other 4xx is final. */
export function isRetryable(code: ErrorCode): boolean {
  return 'retryable' in ERROR_CATALOG[code] && ERROR_CATALOG[code].retryable === true;
}

export function docUrl(code: ErrorCode): string {
  return `/api/guides/api-reference#error-${code}`;
}

/**
 * A refusal by the domain or a service: a stable code from the catalog, a sentence, and details.
 * It carries no HTTP status: the edge takes the status from the catalog (ApiError.status).
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    // A refusal (a 4xx) is an answer, not a fault: no stack trace is taken for it (capturing one,
    // under Koa's middleware, was 12% of a 400's main-thread CPU; issue 29). A 5xx keeps its stack:
    // it is logged with it (app.ts, a failed job).
    const limit = Error.stackTraceLimit;
    if (ERROR_CATALOG[code].status < 500) Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /** The error body; bigint details are nano amounts, shown as credits. */
  toBody(): Record<string, unknown> {
    return { error: this.message, code: this.code, doc_url: docUrl(this.code), ...readableNumbers(withCredits(this.details)) };
  }

  /** Rebuild a refusal from its stored body (a trade's outcome read back from its job or Postgres). */
  static fromBody(body: Record<string, unknown>): DomainError {
    const { error, code, doc_url: _doc, ...details } = body as { error?: string; code?: string; doc_url?: string };
    const known = code && code in ERROR_CATALOG ? (code as ErrorCode) : 'internal_error';
    return new DomainError(known, error ?? 'The request failed.', details);
  }
}

/** A DomainError at the HTTP edge: its status comes from the catalog, or from the route's own override. */
export class ApiError extends DomainError {
  readonly status: number;
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, status?: number) {
    super(code, message, details);
    this.status = status ?? ERROR_CATALOG[code].status;
  }

  static from(err: DomainError): ApiError {
    return err instanceof ApiError ? err : new ApiError(err.code, err.message, err.details);
  }
}

export const notFound = (what: string, code: ErrorCode = 'not_found') => new DomainError(code, `${what} was not found.`);
export const badRequest = (message: string, details?: Record<string, unknown>) => new DomainError('validation_failed', message, details);
export const conflict = (message: string, details?: Record<string, unknown>) => new DomainError('conflict', message, details);
/** The same Idempotency-Key on a request that differs from its first use: in the body, or only in the endpoint (the hash covers both). */
export const idempotencyKeyReuse = () =>
  new DomainError('idempotency_key_reuse', 'This Idempotency-Key was already used for a different request (another endpoint, or another body): send a new key with a new request.');
