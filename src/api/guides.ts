import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ERROR_CATALOG, isRetryable, type ErrorCode } from '../errors';

export const GUIDE_CATEGORIES = [
  { id: 'start', title: 'Getting started', description: 'What the service is, how to call it, and a first agent.', order: 1 },
  { id: 'agents', title: 'Building agents', description: 'Trading agents, connections, telemetry and the agent-facing API.', order: 2 },
  { id: 'trading', title: 'Markets and trading', description: 'Books, trades, orders, proposals, credits and payouts.', order: 3 },
  { id: 'admin', title: 'Running a workspace', description: 'Creating a floor, designing metrics, formulas, horizons and sources.', order: 4 },
  { id: 'reference', title: 'Reference', description: 'Keys and scopes, error codes, compatibility.', order: 5 },
];

/** Every section of spec §4.1, in reading order; each is docs/guides/<id>.md (api-reference is generated). */
const GUIDES: Array<{ id: string; title: string; description: string; category: string }> = [
  { id: 'overview', title: 'Overview', description: 'What the service does, where things are, a first session.', category: 'start' },
  { id: 'onboarding', title: 'Onboarding', description: 'Registration, key-first onboarding, claiming, the waitlist.', category: 'start' },
  { id: 'build-agent', title: 'Build an agent', description: 'A complete trading agent in TypeScript against the OpenAPI types.', category: 'start' },
  { id: 'recipes', title: 'Recipes', description: 'Short programs for common jobs: branch trading, quotes, dashboards, retries.', category: 'start' },
  { id: 'agent-api', title: 'Agent API', description: 'The routes an agent uses, and how it stays informed.', category: 'agents' },
  { id: 'connect', title: 'Connect', description: 'Connecting programs and assistants: REST, the OpenAPI document, typed clients, and the MCP connector (OAuth, tools by ask type, revoking).', category: 'agents' },
  { id: 'agent-telemetry', title: 'Agent telemetry', description: 'What an agent can report about itself and what this instance records.', category: 'agents' },
  { id: 'feedback', title: 'Feedback', description: 'Reporting problems and requests, with request ids.', category: 'agents' },
  { id: 'markets', title: 'Markets', description: 'LMSR books, consensus, payouts, trading modes.', category: 'trading' },
  { id: 'limit-orders', title: 'Limit orders', description: 'Resting buy orders as walls on a book.', category: 'trading' },
  { id: 'proposals', title: 'Proposals', description: 'Conditional branches, impact and decisions.', category: 'trading' },
  { id: 'credits', title: 'Credits', description: 'Nano-units, the ledger, minting and transfers.', category: 'trading' },
  { id: 'get-paid', title: 'Get paid', description: 'Turning credits into money.', category: 'trading' },
  { id: 'seasons', title: 'Seasons', description: 'Periods, standings and how performance is measured here.', category: 'trading' },
  { id: 'creating', title: 'Creating a workspace', description: 'A floor from nothing: workspace, metrics, books, members.', category: 'admin' },
  { id: 'metric-design', title: 'Metric design', description: 'Choosing ranges, readings, horizons and liquidity that make good books.', category: 'admin' },
  { id: 'formulas', title: 'Formulas', description: 'Computed metrics.', category: 'admin' },
  { id: 'time-preference', title: 'Time preference', description: 'Which dates get books.', category: 'admin' },
  { id: 'sources', title: 'Sources', description: 'Information a workspace shares with its traders.', category: 'admin' },
  { id: 'auth-and-keys', title: 'Authentication and keys', description: 'Credentials, capabilities, scopes, keys.', category: 'reference' },
  { id: 'api-reference', title: 'API reference', description: 'Conventions, the OpenAPI document and the error code catalog.', category: 'reference' },
  { id: 'compatibility', title: 'Compatibility', description: 'What never changes, and how superseded parameters are announced.', category: 'reference' },
];

function apiReference(): string {
  const rows = Object.entries(ERROR_CATALOG).map(
    ([code, e]) => `<a id="error-${code}"></a>\n### ${code}\nHTTP ${e.status}${isRetryable(code as ErrorCode) ? ', retryable' : ''}. ${e.text}\n`,
  );
  return [
    '# API reference',
    '',
    'Every route lives under `/api`; GET /api/help is the live catalog generated from the running routes.',
    'GET /api/openapi.json is the same catalog as an OpenAPI 3.1 document: request and response schemas, the auth rule, capability and scope of each route (`x-auth`) and the error codes it can answer with (`x-error-codes`). GET /api/reference renders it; `npm run client:generate` turns it into TypeScript types (examples/api.d.ts).',
    '',
    '## Conventions',
    '',
    '- Bodies are JSON (`Content-Type: application/json`, at most 1 MB); anything else is 415 `unsupported_media_type`.',
    '- Credits are whole-credit JSON numbers with at most 9 decimals (1 credit = 10^9 nano-units inside).',
    '- Instants are ISO 8601 strings in UTC (`2026-11-22T19:08:42.447Z`); target dates are `YYYY`, `YYYY-MM`, `YYYY-Www`, `YYYY-MM-DD` or relative `+2w`.',
    '- Lists take `limit` (and `offset` where noted); X-Total-Count carries the total where a list is paged.',
    '- Every answer carries X-Request-Id (send your own to correlate); quote it when reporting a problem.',
    '- A request that uses a superseded parameter gets a Deprecation header and a `warnings` entry (see /api/guides/compatibility).',
    '',
    '## Errors',
    '',
    'Errors carry `error` (a sentence, not stable), and `code` and `doc_url` (stable). Branch on `code`, or on the HTTP status when `code` is absent.',
    '',
    '## Retrying',
    '',
    `Retryable codes: ${(Object.keys(ERROR_CATALOG) as ErrorCode[]).filter(isRetryable).map((c) => `\`${c}\``).join(', ')}. They answer with a Retry-After header (seconds); send the same request again after it, with the same Idempotency-Key on money moves, and the service applies it at most once. A network error or a 502/504 from a proxy is retried the same way. Every other code is final for that request.`,
    '',
    '## Error bodies',
    '',
    '```json',
    '{ "error": "Not enough credits: the balance is 86.930963233 and this needs 1000.", "code": "insufficient_balance",',
    '  "doc_url": "/api/guides/api-reference#error-insufficient_balance", "balance": 86.930963233, "cost": 1000 }',
    '```',
    '',
    'A request that fails validation is 400 `validation_failed` with `issues: [{ path, message }]`.',
    '',
    '## Error codes',
    '',
    ...rows,
  ].join('\n');
}

export function guideIndex() {
  return GUIDES.map((g, i) => ({ ...g, path: `/api/guides/${g.id}`, order: i + 1 }));
}

/** The project root (where package.json is): two levels up under tsx and jest, three from the compiled dist/src/api. */
const ROOT = ((): string => {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${__dirname}: the guides cannot be found.`);
  }
})();

/** `{{example:name.ts}}` in a guide is replaced by examples/name.ts: the guide shows code the typecheck compiles. */
function withExamples(text: string): string {
  return text.replace(/\{\{example:([\w-]+\.ts)\}\}/g, (_m, name: string) => {
    const file = join(ROOT, 'examples', name);
    return existsSync(file) ? readFileSync(file, 'utf8').trimEnd() : `(examples/${name} is not shipped with this instance)`;
  });
}

/** Guides ship as Markdown under docs/guides/; api-reference is generated from the error catalog. */
export function guideText(id: string): string | null {
  const g = GUIDES.find((x) => x.id === id);
  if (!g) return null;
  if (id === 'api-reference') return apiReference();
  const file = join(ROOT, 'docs', 'guides', `${id}.md`);
  return existsSync(file) ? withExamples(readFileSync(file, 'utf8')) : `# ${g.title}\n\n${g.description}\n`;
}
