import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import type { ObservedResponse } from '../../src/api/app';
import { openApiDocument, openApiPath } from '../../src/api/openapi';

/**
 * The contract check: every answer the app gives in the integration suite is validated against
 * the OpenAPI document (ajv, JSON Schema 2020-12 as OAS 3.1 uses it). Success bodies against their
 * route's response schema, refusals against the shared Error schema and the route's declared codes.
 */
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }>; 'x-error-codes'?: string[] }>> };

let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction>();

function validator(pointer: string): ValidateFunction {
  let v = compiled.get(pointer);
  if (!v) {
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
      addFormats(ajv);
      ajv.addSchema(openApiDocument(), 'openapi.json');
    }
    v = ajv.compile({ $ref: `openapi.json#${pointer}` });
    compiled.set(pointer, v);
  }
  return v;
}

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Why an answer breaks the contract, or null when it keeps it. */
export function contractViolation(r: ObservedResponse): string | null {
  const doc = openApiDocument() as unknown as Doc;
  const where = `${r.method} ${r.path} -> ${r.status}`;
  // The web pages (HTML under /, outside /api) are not part of the API's document.
  if (!r.route && !r.path.startsWith('/api') && /html/.test(r.type)) return null;
  let body: unknown = r.body;
  if (body !== undefined && body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) body = JSON.parse(JSON.stringify(body));
  if (r.status >= 400) {
    const v = validator('/components/schemas/Error');
    if (!v(body)) return `${where}: error body does not match the Error schema: ${ajv!.errorsText(v.errors)} in ${JSON.stringify(body).slice(0, 300)}`;
  }
  if (!r.route) return null; // not a route of the document (no match, or the reference page's assets)
  const path = openApiPath(r.route.path);
  const method = r.route.method.toLowerCase();
  const op = doc.paths[path]?.[method];
  if (!op) return `${where}: ${r.route.method} ${path} is not in the document`;
  if (r.status >= 400) {
    const code = (body as { code?: string }).code ?? '';
    if (!(op['x-error-codes'] ?? []).includes(code)) return `${where}: code ${code} is not among the route's declared errors`;
  }
  const resp = op.responses[String(r.status)];
  if (!resp) return `${where}: status ${r.status} is not documented for ${r.route.method} ${path}`;
  if (r.status >= 400) return null;
  const media = resp.content ? Object.keys(resp.content)[0] : undefined;
  if (!media) return body === undefined || body === null || body === '' ? null : `${where}: the document says no body, but one was sent`;
  if (media === 'application/json' && !/json/.test(r.type)) return `${where}: documented as JSON, sent as ${r.type}`;
  const v = validator(`/paths/${esc(path)}/${method}/responses/${r.status}/content/${esc(media)}/schema`);
  if (!v(body)) return `${where}: body does not match the response schema: ${ajv!.errorsText(v.errors)} (${JSON.stringify(v.errors?.[0]?.params)}) in ${JSON.stringify(body).slice(0, 400)}`;
  return null;
}

/** Collects violations; the harness asserts none after each test and when the app closes. */
export class ContractRecorder {
  private violations: string[] = [];

  observe = (r: ObservedResponse): void => {
    let v: string | null;
    try {
      v = contractViolation(r);
    } catch (err) {
      v = `${r.method} ${r.path}: the contract check failed: ${(err as Error).message}`;
    }
    if (v) this.violations.push(v);
  };

  take(): string[] {
    const out = this.violations;
    this.violations = [];
    return out;
  }
}
