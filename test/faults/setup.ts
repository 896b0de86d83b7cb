import { randomBytes } from 'node:crypto';
import type { HarnessClient, RequestRecord } from './client';

/** What the load needs to know about the floor built over HTTP before the faults start. */

export interface Trader {
  id: string;
  key: string;
  /** Last position seen per market (from trade answers); approximate under concurrency. */
  positions: Map<string, { direction: 'higher' | 'lower'; shares: number }>;
}

export interface MarketRef {
  id: string;
  metricId: string;
  proposalId: string | null;
  branch: string | null;
}

export interface Floor {
  workspaceId: string;
  ownerKey: string;
  metricIds: string[];
  markets: MarketRef[];
  proposals: Array<{ id: string; marketIds: string[] }>;
  traders: Trader[];
}

const nick = (p: string) => `${p}${randomBytes(4).toString('hex')}`;

function expectStatus(rec: RequestRecord, ok: number[]): any {
  if (rec.status === undefined || !ok.includes(rec.status)) {
    throw new Error(`setup ${rec.method} ${rec.path} failed: ${rec.status ?? 'no definite answer'} ${JSON.stringify(rec.response ?? rec.indefinite)}`);
  }
  return rec.response;
}

async function inBatches<T, R>(items: T[], size: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(f))));
  return out;
}

export async function buildFloor(
  client: HarnessClient,
  masterKey: string,
  opts: { traders: number; metricValues: number[]; proposals: number; traderCredits: number },
): Promise<Floor> {
  const master = { 'X-API-Key': masterKey };
  const register = async (prefix: string) => {
    const r = expectStatus(await client.send('setup', 'POST', '/api/agents/register', {}, { name: nick(prefix), operator: 'faults@example.com' }), [201]);
    return { id: r.agentId as string, key: r.apiKey as string };
  };
  const mint = async (agentId: string, amount: number) =>
    expectStatus(await client.send('setup', 'POST', `/api/agents/${agentId}/credit`, master, { amount, reason: 'fault harness' }), [200]);

  const owner = await register('owner');
  await mint(owner.id, 200_000);
  const ws = expectStatus(
    await client.send('setup', 'POST', '/api/workspaces', { 'X-Agent-Key': owner.key }, { name: nick('faults-ws-'), public: true }),
    [201],
  );
  const asOwner = { 'X-Agent-Key': owner.key, 'X-Workspace-Id': ws.id as string };

  const metricIds: string[] = [];
  for (const value of opts.metricValues) {
    const m = expectStatus(await client.send('setup', 'POST', '/api/metrics', asOwner, { name: nick('metric-'), value }), [200, 201]);
    metricIds.push(m.id);
  }
  const markets: MarketRef[] = [];
  for (const metricId of metricIds) {
    const list = expectStatus(await client.send('setup', 'GET', `/api/predictions/markets?metricId=${metricId}&limit=200`, asOwner), [200]) as any[];
    for (const mk of list) if (mk.funded && mk.status === 'open') markets.push({ id: mk.id, metricId, proposalId: null, branch: null });
  }

  const traders = await inBatches(Array.from({ length: opts.traders }, (_, i) => i), 5, async (i) => {
    const t = await register(`trader${i}-`);
    expectStatus(await client.send('setup', 'POST', `/api/marketplace/${ws.id}/join`, { 'X-Agent-Key': t.key }), [200]);
    await mint(t.id, opts.traderCredits);
    return { ...t, positions: new Map() } as Trader;
  });

  const proposals: Floor['proposals'] = [];
  for (let i = 0; i < opts.proposals; i++) {
    const p = expectStatus(
      await client.send('setup', 'POST', '/api/proposals', asOwner, { title: `Fault harness proposal ${i + 1}`, metricIds: [metricIds[i % metricIds.length]], liquidity: 20 }),
      [200],
    );
    const ids: string[] = [];
    for (const mk of p.conditionalMarkets as any[]) {
      if (!mk.funded) continue;
      ids.push(mk.id);
      markets.push({ id: mk.id, metricId: mk.metricId, proposalId: p.id, branch: mk.branch });
    }
    proposals.push({ id: p.id, marketIds: ids });
  }
  return { workspaceId: ws.id, ownerKey: owner.key, metricIds, markets, proposals, traders };
}
