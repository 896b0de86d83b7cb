import { Agent, request as httpRequest } from 'node:http';
import { sleep } from './cluster';

/**
 * The harness's HTTP client. A request that got no definite answer (a network error, a refused
 * connection while the API is down, a timeout, any 5xx, a 429) is sent again with the same body and
 * the same headers (so the same Idempotency-Key), with backoff, until it gets a 2xx or a 4xx other
 * than 429, or until the shared deadline passes (then it is a stuck request).
 */

export interface Answer {
  status: number;
  body: any;
  /** The Retry-After header, if any. */
  retryAfter?: string;
}

export type RequestKind = 'trade' | 'condensed' | 'decision' | 'settle' | 'setup' | 'refresh';

export interface RequestRecord {
  kind: RequestKind;
  method: string;
  path: string;
  body: unknown;
  headers: Record<string, string>;
  idempotencyKey?: string;
  /** The trader (agent id) for trade requests. */
  agentId?: string;
  marketId?: string;
  attempts: number;
  firstSentAt: number;
  definiteAt?: number;
  status?: number;
  code?: string;
  response?: any;
  /** The API base URL the definite answer came from. */
  answeredBy?: string;
  /** What the indefinite attempts saw, counted (e.g. "ECONNREFUSED", "503 trade_pending"). */
  indefinite: Record<string, number>;
}

/** Mutable so the faults runner can set it once the last fault has happened. */
export interface Deadline {
  at: number;
}

export class HarnessClient {
  readonly records: RequestRecord[] = [];
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });

  constructor(
    private readonly base: () => string,
    readonly deadline: Deadline,
    private readonly attemptTimeoutMs = 15_000,
  ) {}

  /** One attempt; rejects on a network error or a timeout. */
  private once(method: string, path: string, headers: Record<string, string>, body: unknown, base: string): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const url = new URL(path, base);
    return new Promise((res, rej) => {
      const req = httpRequest(
        url,
        {
          method,
          agent: this.agent,
          headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}) },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('error', rej);
          r.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : null;
            } catch {
              // keep the text
            }
            const retryAfter = r.headers['retry-after'];
            res({ status: r.statusCode ?? 0, body: parsed, ...(retryAfter !== undefined ? { retryAfter: String(retryAfter) } : {}) });
          });
        },
      );
      req.setTimeout(this.attemptTimeoutMs, () => req.destroy(Object.assign(new Error('attempt timed out'), { code: 'TIMEOUT' })));
      req.on('error', rej);
      req.end(payload);
    });
  }

  /** Send until a definite answer or the deadline; the record says which. */
  async send(
    kind: RequestKind,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
    extra: Partial<Pick<RequestRecord, 'agentId' | 'marketId'>> = {},
  ): Promise<RequestRecord> {
    const rec: RequestRecord = {
      kind,
      method,
      path,
      body,
      headers,
      idempotencyKey: headers['Idempotency-Key'],
      ...extra,
      attempts: 0,
      firstSentAt: Date.now(),
      indefinite: {},
    };
    this.records.push(rec);
    for (;;) {
      rec.attempts += 1;
      let why: string;
      try {
        const base = this.base();
        const a = await this.once(method, path, headers, body, base);
        if ((a.status >= 200 && a.status < 300) || (a.status >= 400 && a.status < 500 && a.status !== 429)) {
          rec.definiteAt = Date.now();
          rec.answeredBy = base;
          rec.status = a.status;
          rec.response = a.body;
          rec.code = a.status >= 400 ? String(a.body?.code ?? a.status) : undefined;
          return rec;
        }
        // A retryable answer says when to come back: one without Retry-After is counted as such.
        why = `${a.status} ${a.body?.code ?? ''}${a.retryAfter === undefined ? ' (no Retry-After)' : ''}`.trim();
      } catch (err) {
        why = String((err as { code?: string }).code ?? (err as Error).message);
      }
      rec.indefinite[why] = (rec.indefinite[why] ?? 0) + 1;
      if (Date.now() >= this.deadline.at) return rec;
      const backoff = Math.min(2000, 50 * 2 ** Math.min(rec.attempts - 1, 6)) * (0.5 + Math.random());
      await sleep(Math.min(backoff, Math.max(0, this.deadline.at - Date.now())));
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
