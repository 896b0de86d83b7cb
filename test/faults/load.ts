import { randomUUID } from 'node:crypto';
import type { HarnessClient, RequestRecord } from './client';
import { sleep } from './cluster';
import type { Floor, MarketRef, Trader } from './setup';

/**
 * The load: every trader sends trades concurrently (at most two young requests of its own in
 * flight; a request older than 10 s no longer holds the trader back, so a stuck key does not stop
 * the load), each with a fresh Idempotency-Key, mixing every mode and both directions. Decisions
 * and settles run at their scheduled moments.
 */

type Direction = 'higher' | 'lower';

const round2 = (x: number) => Math.round(x * 100) / 100;
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)];
const other = (d: Direction): Direction => (d === 'higher' ? 'lower' : 'higher');

export interface ScheduledAction {
  /** Seconds after the load starts. */
  at: number;
  label: string;
  run: () => Promise<RequestRecord>;
}

export class Load {
  private readonly live = new Set<string>();
  private readonly inFlight: Array<Promise<unknown>> = [];
  readonly actions: Array<{ label: string; record: RequestRecord }> = [];
  /** Harness-side errors (a bug here, not in the service); reported and failed on. */
  readonly errors: string[] = [];

  constructor(
    private readonly client: HarnessClient,
    private readonly floor: Floor,
    private readonly masterKey: string,
  ) {
    for (const m of floor.markets) this.live.add(m.id);
  }

  private liveMarkets(): MarketRef[] {
    const xs = this.floor.markets.filter((m) => this.live.has(m.id));
    return xs.length ? xs : this.floor.markets;
  }

  /** Approve or decline a proposal with the master key; its branches leave the traded set. */
  decide(proposalIndex: number, decision: 'approve' | 'decline'): () => Promise<RequestRecord> {
    return async () => {
      const p = this.floor.proposals[proposalIndex];
      const rec = await this.client.send('decision', 'POST', `/api/proposals/${p.id}/${decision}`, this.master(), {});
      if (rec.status === 200) for (const id of p.marketIds) this.live.delete(id);
      return rec;
    };
  }

  /** Settle a metric early with the master key; its books leave the traded set. */
  settle(metricIndex: number, value: number): () => Promise<RequestRecord> {
    return async () => {
      const metricId = this.floor.metricIds[metricIndex];
      const rec = await this.client.send('settle', 'POST', `/api/metrics/${metricId}/settle`, this.master(), { value, reason: 'fault harness settles early' });
      if (rec.status === 200) for (const m of this.floor.markets) if (m.metricId === metricId) this.live.delete(m.id);
      return rec;
    };
  }

  private master() {
    return { 'X-API-Key': this.masterKey, 'X-Workspace-Id': this.floor.workspaceId };
  }

  /**
   * Runs the traders and the scheduled actions until `seconds` have passed and `alsoUntil` (the
   * faults) has settled, so every fault happens under load; returns at once after that.
   */
  async run(seconds: number, scheduled: ScheduledAction[], alsoUntil: Promise<unknown> = Promise.resolve()): Promise<void> {
    const start = Date.now();
    const end = { at: Number.POSITIVE_INFINITY };
    const settled = () => void (end.at = Math.max(start + seconds * 1000, Date.now()));
    alsoUntil.then(settled, settled);
    const actions = scheduled.map(async (a) => {
      await sleep(Math.max(0, start + a.at * 1000 - Date.now()));
      try {
        this.actions.push({ label: a.label, record: await a.run() });
      } catch (err) {
        this.errors.push(`${a.label}: ${String((err as Error).stack ?? err)}`);
      }
    });
    await Promise.all([...this.floor.traders.map((t) => this.traderLoop(t, end)), ...actions]);
  }

  /** Every request started so far has a definite answer or reached the deadline. */
  async drain(): Promise<void> {
    await Promise.all(this.inFlight);
  }

  private async traderLoop(t: Trader, until: { at: number }): Promise<void> {
    await sleep(Math.random() * 300);
    let mine: Array<{ startedAt: number; done: boolean }> = [];
    while (Date.now() < until.at) {
      const now = Date.now();
      mine = mine.filter((o) => !o.done && now - o.startedAt < 10_000);
      if (mine.length >= 2) {
        await sleep(25);
        continue;
      }
      const op = { startedAt: now, done: false };
      mine.push(op);
      this.inFlight.push(
        this.oneTrade(t)
          .catch((err: unknown) => void this.errors.push(String((err as Error).stack ?? err)))
          .finally(() => {
            op.done = true;
          }),
      );
      await sleep(20 + Math.random() * 120);
    }
  }

  private async oneTrade(t: Trader): Promise<void> {
    const headers = { 'X-Agent-Key': t.key, 'X-Workspace-Id': this.floor.workspaceId, 'Idempotency-Key': `flt-${randomUUID()}` };
    const markets = this.liveMarkets();
    const held = [...t.positions.entries()].filter(([id, p]) => this.live.has(id) && p.shares > 0.00001);
    const r = Math.random();

    if (r < 0.1) {
      // Condensed form: { side, credits }.
      const mk = pick(markets);
      const pos = t.positions.get(mk.id);
      const side: Direction = pos && Math.random() < 0.5 ? other(pos.direction) : pick(['higher', 'lower'] as Direction[]);
      await this.client.send('condensed', 'POST', `/api/predictions/markets/${mk.id}/trade`, headers, { side, credits: round2(0.5 + Math.random() * 4) }, {
        agentId: t.id,
        marketId: mk.id,
      });
      return;
    }

    let mk: MarketRef;
    let body: Record<string, unknown>;
    if (r < 0.3 && held.length) {
      // Sell part or all of a held position.
      const [id, pos] = pick(held);
      mk = this.floor.markets.find((m) => m.id === id)!;
      const frac = Math.random() < 0.3 ? 1 : 0.2 + Math.random() * 0.6;
      const shares = Math.floor(pos.shares * frac * 1e6) / 1e6;
      body = { marketId: id, direction: pos.direction, sellShares: Math.max(shares, 0.000001) };
    } else if (r < 0.5) {
      // Target mode: move the price toward a value within a budget.
      mk = pick(markets);
      body = { marketId: mk.id, targetValue: Math.round(50 + Math.random() * 900), maxBudget: round2(1 + Math.random() * 7) };
    } else {
      // Buy with an amount; against a held position half the time, which redeems matched pairs.
      const mine = held.length && Math.random() < 0.5 ? pick(held) : null;
      mk = mine ? this.floor.markets.find((m) => m.id === mine[0])! : pick(markets);
      const pos = t.positions.get(mk.id);
      const direction: Direction = pos && pos.shares > 0 && Math.random() < 0.6 ? other(pos.direction) : pick(['higher', 'lower'] as Direction[]);
      body = { marketId: mk.id, direction, amount: round2(0.5 + Math.random() * 5.5) };
      if (Math.random() < 0.05) body.limit = direction === 'higher' ? 700 : 300;
    }
    const rec = await this.client.send('trade', 'POST', '/api/predictions/trade', headers, body, { agentId: t.id, marketId: mk.id });
    const position = rec.status === 200 ? rec.response?.position : undefined;
    if (position) {
      if (position.direction) t.positions.set(mk.id, { direction: position.direction, shares: position.shares });
      else t.positions.delete(mk.id);
    }
  }
}
