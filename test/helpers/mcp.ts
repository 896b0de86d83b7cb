import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestApp } from './harness';

export function mcpUrl(app: TestApp): URL {
  return new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`);
}

/** What the person answers to the next confirmations (elicitations), in order; and what was asked. */
export interface Person {
  answers: ElicitResult[];
  asked: string[];
}

/** The official SDK client over Streamable HTTP, with elicitation answered from `person`. */
export async function connectClient(app: TestApp, transportOpts: ConstructorParameters<typeof StreamableHTTPClientTransport>[1], person: Person = { answers: [], asked: [] }) {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    person.asked.push(String(req.params.message));
    const next = person.answers.shift();
    if (!next) throw new Error(`unexpected confirmation: ${req.params.message}`);
    return next;
  });
  const transport = new StreamableHTTPClientTransport(mcpUrl(app), transportOpts);
  await client.connect(transport);
  return { client, transport, person };
}

/** The tool result's text, parsed as JSON when it is JSON. */
export function resultBody(result: unknown): any {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  const t = content.find((c) => c.type === 'text')?.text ?? '';
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}
