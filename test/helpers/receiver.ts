import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  type: string;
  body: any;
  headers: Record<string, string>;
  /** true when the standardwebhooks verifier accepted the message with the receiver's secret. */
  verified: boolean;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A real webhook receiver on loopback: verifies every message with the `standardwebhooks` verifier,
 * records what it got, and answers what `answer` says (200 by default). `down()` stops listening
 * (connections refused) and `up()` listens again on the same port.
 */
export class Receiver {
  readonly got: Received[] = [];
  /** Every request, accepted or not (attempts). */
  readonly attempts: Array<{ id: string; status: number; at: number }> = [];
  answer: (msg: Received, n: number) => Answer = () => ({ status: 200 });
  secret = '';
  private server: http.Server;
  private port = 0;

  constructor() {
    this.server = this.make();
  }

  private make(): http.Server {
    return http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        let verified = false;
        try {
          new Webhook(this.secret).verify(raw, headers);
          verified = true;
        } catch {
          verified = false;
        }
        let body: any = null;
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
        const msg: Received = { id: headers['webhook-id'], type: body?.type, body, headers, verified, at: Date.now() };
        const a = this.answer(msg, this.attempts.length);
        this.attempts.push({ id: msg.id, status: a.status, at: msg.at });
        if (a.status >= 200 && a.status < 300) this.got.push(msg);
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? '');
      });
    });
  }

  async up(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(this.port, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async down(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
    this.server = this.make();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  get portNumber(): number {
    return this.port;
  }

  /** Wait (polling, bounded) until `pred` holds; throws with `what` when it never does. */
  async until(pred: () => boolean, what: string, ms = 15000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`receiver: ${what} did not happen within ${ms} ms (got ${this.got.length}: ${this.got.map((g) => g.type).join(', ')})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export async function receiver(): Promise<Receiver> {
  return new Receiver().up();
}
