/**
 * A webhook receiver that verifies every message (Standard Webhooks) and handles each event once.
 *   WEBHOOK_SECRET=whsec_... npx tsx examples/webhook-receiver.ts
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const verifier = new Webhook(process.env.WEBHOOK_SECRET ?? '');
const seen = new Set<string>(); // a real receiver keeps this in its database

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event: { id: string; type: string; workspaceId: string; timestamp: string; data: Record<string, unknown> };
      try {
        // Checks webhook-signature over `id.timestamp.body` and that webhook-timestamp is within 5 minutes.
        event = verifier.verify(body, req.headers as Record<string, string>) as typeof event;
      } catch {
        res.writeHead(400).end();
        return;
      }
      // Retries carry the same webhook-id: answer 2xx again without acting twice.
      if (!seen.has(event.id)) {
        seen.add(event.id);
        console.log(event.type, event.data);
      }
      res.writeHead(204).end();
    });
  })
  .listen(Number(process.env.PORT ?? 8080));
