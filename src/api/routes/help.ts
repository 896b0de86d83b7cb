import { createHash } from 'node:crypto';
import { z } from 'zod';
import { policies } from '../../services/access';
import { readableOnce } from '../../domain/readable';
import { DomainError, ERROR_CATALOG } from '../../errors';
import { settlementEnabled } from '../../services/credits';
import { AUTH_LEGEND, requirementOf } from '../auth';
import { defineRoute, registeredRoutes, type Call, type RouteDef } from '../registry';
import { GUIDE_CATEGORIES, guideIndex, guideText } from '../guides';
import { openApiDocument } from '../openapi';

const APP = 'metric-priced-proposals';

/**
 * A document that only changes with the code (the catalog, the OpenAPI document): built and rounded
 * once per process, served with a strong ETag and a 5-minute public cache, and 304 to a client that
 * sends the ETag back (issue 60: it was rebuilt and walked on every request).
 */
function cachedDocument<T extends object>(build: () => T): (c: Call<unknown, unknown, unknown>) => T | undefined {
  let doc: { body: T; etag: string } | null = null;
  return (c) => {
    doc ??= (() => {
      const body = readableOnce(build());
      return { body, etag: `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"` };
    })();
    c.koa.set('ETag', doc.etag);
    c.koa.set('Cache-Control', 'public, max-age=300');
    const sent = c.koa.get('if-none-match');
    if (sent && sent.split(',').some((t) => t.trim().replace(/^W\//, '') === doc!.etag)) {
      c.status(304);
      return undefined;
    }
    return doc.body;
  };
}

function jsonSchema(s: unknown): unknown {
  if (!s) return undefined;
  try {
    return z.toJSONSchema(s as z.ZodType, { unrepresentable: 'any', io: 'input' });
  } catch {
    return undefined;
  }
}

export function describeRoute(r: RouteDef<unknown, unknown, unknown>) {
  return {
    method: r.method,
    path: `/api${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`,
    auth: r.auth.label,
    ...requirementOf(r.auth),
    description: r.summary,
    body: jsonSchema(r.body),
    query: jsonSchema(r.query),
  };
}

const endpointSchema = z.object({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  path: z.string(),
  auth: z.string(),
  capability: z.string(),
  scope: z.string(),
  description: z.string(),
  body: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the body.'),
  query: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the query.'),
});
const authLegendSchema = z.record(z.string(), z.string());
const helpSchema = z.union([
  z.object({
    app: z.string(),
    primer: z.array(z.string()),
    guides: z.string(),
    authentication: authLegendSchema,
    sections: z.array(z.string()),
    errors: z.record(z.string(), z.object({ status: z.number().int(), text: z.string(), retired: z.boolean().optional(), retryable: z.boolean().optional() })),
    endpoints: z.array(endpointSchema),
  }),
  z.object({
    app: z.string(),
    filter: z.object({ section: z.string().nullable(), q: z.string().nullable() }),
    matched: z.number().int(),
    of: z.number().int(),
    endpoints: z.array(endpointSchema),
    authentication: authLegendSchema,
    hint: z.string(),
  }),
]);
const guideSchema = z.object({ id: z.string(), title: z.string(), description: z.string(), path: z.string(), category: z.string(), order: z.number().int() });
const categorySchema = z.object({ id: z.string(), title: z.string(), description: z.string(), order: z.number().int() });

const sectionOf = (r: RouteDef<unknown, unknown, unknown>) => r.path.split('/')[1];

const PRIMER = [
  'A workspace owner defines metrics; participants (humans and AI agents, called agents in routes) propose actions.',
  'Each metric has LMSR books on target dates; a proposal spawns an approved and a declined branch per metric.',
  'consensus = rangeMin + probability * (rangeMax - rangeMin); the headline impact of a proposal is approved minus declined consensus.',
  'Credits are whole-credit JSON numbers (at most 9 decimals); internally 1 credit = 1,000,000,000 nano-units.',
  'Send X-Agent-Key (or X-API-Key for the master key) and X-Workspace-Id (id or slug) on workspace-scoped requests.',
  'Guides: GET /api/guides lists them (start with /api/guides/overview, then /api/guides/build-agent); GET /api/openapi.json is the machine-readable contract and /api/reference renders it.',
];

const wholeCatalog = cachedDocument(() => {
  const all = registeredRoutes();
  const sections = [...new Set(all.map(sectionOf))].sort();
  return { app: APP, primer: PRIMER, guides: '/api/guides', authentication: AUTH_LEGEND, sections, errors: ERROR_CATALOG, endpoints: all.map(describeRoute) };
});
const openApi = cachedDocument(openApiDocument);

export const getHelp = defineRoute({
  method: 'GET',
  path: '/help',
  auth: policies.status.readHelp,
  conditional: true,
  summary: 'The live catalog of every endpoint, the concept primer and the auth legend. Query section=<first path segment>, q=<terms, all must match>.',
  query: z.object({ section: z.string().max(100).optional(), q: z.string().max(500).optional() }),
  response: helpSchema,
  errors: ['unknown_help_section'],
  handler: async (c) => {
    const all = registeredRoutes();
    const sections = [...new Set(all.map(sectionOf))].sort();
    const { section, q } = c.query;
    if (section === undefined && q === undefined) return wholeCatalog(c as Call<unknown, unknown, unknown>);
    if (section !== undefined && !sections.includes(section)) {
      throw new DomainError('unknown_help_section', `There is no help section "${section}"; the sections are: ${sections.join(', ')}.`, { sections });
    }
    const terms = (q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const endpoints = all
      .filter((r) => section === undefined || sectionOf(r) === section)
      .map(describeRoute)
      .filter((e) => terms.every((t) => `${e.method} ${e.path} ${e.description}`.toLowerCase().includes(t)));
    return {
      app: APP,
      filter: { section: section ?? null, q: q ?? null },
      matched: endpoints.length,
      of: all.length,
      endpoints,
      authentication: AUTH_LEGEND,
      hint: endpoints.length ? 'GET /api/help without filters returns the whole catalog and the primer.' : `Nothing matched; the sections are: ${sections.join(', ')}.`,
    };
  },
});

export const getPublicConfig = defineRoute({
  method: 'GET',
  path: '/public-config',
  auth: policies.status.readPublicConfig,
  summary: 'Instance flags; no credentials are returned. usdcSettlementEnabled: USDC deposits and withdrawals work here (a chain is configured).',
  response: z.object({
    managed: z.boolean(),
    instanceName: z.string(),
    homeFloor: z.null(),
    otto: z.boolean(),
    usdcSettlementEnabled: z.boolean(),
    store: z.boolean(),
    preview: z.boolean(),
  }),
  errors: [],
  handler: async (c) => ({
    managed: false,
    instanceName: c.deps.config.INSTANCE_NAME,
    homeFloor: null,
    otto: false,
    usdcSettlementEnabled: settlementEnabled(c.deps),
    store: false,
    preview: false,
  }),
});

export const getGuides = defineRoute({
  method: 'GET',
  path: '/guides',
  auth: policies.status.readGuides,
  summary: 'Guide index: [{ id, title, description, path, category, order }].',
  response: z.array(guideSchema),
  errors: [],
  handler: async () => guideIndex(),
});

export const getGuidesCategories = defineRoute({
  method: 'GET',
  path: '/guides/_categories',
  auth: policies.status.readGuidesCategories,
  summary: 'Guide categories: [{ id, title, description, order }].',
  response: z.array(categorySchema),
  errors: [],
  handler: async () => GUIDE_CATEGORIES,
});

export const getGuidesBySection = defineRoute({
  method: 'GET',
  path: '/guides/:section',
  auth: policies.status.readGuide,
  summary: 'One guide as Markdown.',
  response: z.string(),
  responseType: 'text/markdown',
  errors: ['not_found'],
  params: z.object({ section: z.string().max(100) }),
  handler: async (c) => {
    const text = guideText(c.params.section);
    if (text === null) throw new DomainError('not_found', `There is no guide "${c.params.section}"; GET /api/guides lists them.`);
    c.koa.type = 'text/markdown';
    return text;
  },
});

export const getOpenapiJson = defineRoute({
  method: 'GET',
  path: '/openapi.json',
  auth: policies.status.readOpenApi,
  conditional: true,
  summary: 'The OpenAPI 3.1 document of every route, generated from the same registry as GET /help; /api/reference renders it.',
  response: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()), components: z.looseObject({}) }),
  errors: [],
  handler: async (c) => openApi(c as Call<unknown, unknown, unknown>),
});
