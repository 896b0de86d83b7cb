import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CATALOG, isRetryable, type ErrorCode } from '../errors';

export const GUIDE_CATEGORIES = [
  { id: 'start', title: 'Getting started', description: 'What the service is and how to call it.', order: 1 },
  { id: 'trading', title: 'Markets and trading', description: 'Books, trades, proposals.', order: 2 },
  { id: 'admin', title: 'Running a workspace', description: 'Metrics, horizons, access.', order: 3 },
];

const GUIDES: Array<{ id: string; title: string; description: string; category: string }> = [
  { id: 'overview', title: 'Overview', description: 'What the service does.', category: 'start' },
  { id: 'api-reference', title: 'API reference', description: 'Conventions and the error code catalog.', category: 'start' },
  { id: 'auth-and-keys', title: 'Authentication and keys', description: 'Keys, scopes, capabilities.', category: 'start' },
  { id: 'compatibility', title: 'Compatibility', description: 'How superseded parameters are announced.', category: 'start' },
  { id: 'credits', title: 'Credits', description: 'Nano-units, the ledger, minting and transfers.', category: 'trading' },
  { id: 'markets', title: 'Markets', description: 'LMSR books, consensus and payouts.', category: 'trading' },
  { id: 'proposals', title: 'Proposals', description: 'Conditional branches and decisions.', category: 'trading' },
  { id: 'formulas', title: 'Formulas', description: 'Computed metrics.', category: 'admin' },
  { id: 'time-preference', title: 'Time preference', description: 'Which dates get books.', category: 'admin' },
];

function apiReference(): string {
  const rows = Object.entries(ERROR_CATALOG).map(
    ([code, e]) => `<a id="error-${code}"></a>\n### ${code}\nHTTP ${e.status}${isRetryable(code as ErrorCode) ? ', retryable' : ''}. ${e.text}\n`,
  );
  return [
    '# API reference',
    '',
    'Every route lives under `/api`; GET /api/help is the live catalog generated from the running routes.',
    'Errors carry `error` (a sentence, not stable), and `code` and `doc_url` (stable). Branch on `code`, or on the HTTP status when `code` is absent.',
    '',
    '## Retrying',
    '',
    `Retryable codes: ${(Object.keys(ERROR_CATALOG) as ErrorCode[]).filter(isRetryable).map((c) => `\`${c}\``).join(', ')}. They answer with a Retry-After header (seconds); send the same request again after it, with the same Idempotency-Key on money moves, and the service applies it at most once. A network error or a 502/504 from a proxy is retried the same way. Every other code is final for that request.`,
    '',
    '## Error codes',
    '',
    ...rows,
  ].join('\n');
}

export function guideIndex() {
  return GUIDES.map((g, i) => ({ ...g, path: `/api/guides/${g.id}`, order: i + 1 }));
}

/** Guides ship as Markdown under docs/guides/; api-reference is generated from the error catalog. */
export function guideText(id: string): string | null {
  const g = GUIDES.find((x) => x.id === id);
  if (!g) return null;
  if (id === 'api-reference') return apiReference();
  const file = join(__dirname, '..', '..', 'docs', 'guides', `${id}.md`);
  return existsSync(file) ? readFileSync(file, 'utf8') : `# ${g.title}\n\n${g.description}\n`;
}
