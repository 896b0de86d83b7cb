import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { toCredits, toNano } from '../../src/domain/money';
import { checkLedgerInvariant } from '../../src/services/ledger';
import { expectLedgerSound, startTestApp, uniqueName, type TestApp } from '../helpers/harness';
import type { TestWorkspace } from '../helpers/factories';
import { waitForDeletion } from '../helpers/deletions';

/**
 * Stateful fuzzing (issue 26 item 1, sequences): fast-check model-based runs against the real service
 * over HTTP (real Postgres, queues and workers). Each run gets a workspace of its own and applies a
 * random sequence of commands (register, credit, metric, proposal, trade, sell, limit order, transfer,
 * settle, reading + due resolution, decision, deletions, and refusals expected to change nothing). The
 * model keeps every balance, pool and reserve in nano-units: a trade's cost is taken from the answer
 * but checked against the balance change; payouts, refunds and pool remainders are computed by the
 * model. After every command each live participant's balance (over the API), each pool and reserve
 * (ledger accounts) equal the model's, the run's credits are conserved, and the ledger invariant holds.
 *
 * Bounded for CI (25 runs x up to 15 commands); FUZZ_SEED, FUZZ_RUNS and FUZZ_COMMANDS scale it.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 2026);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const COMMANDS = Number(process.env.FUZZ_COMMANDS ?? 15);

type Json = Record<string, any>;
interface MAgent {
  id: string;
  key: string;
  nickname: string;
  balance: bigint;
  deleted: boolean;
}
interface MMarket {
  id: string;
  metricId: string;
  proposalId: string | null;
  branch: 'approved' | 'declined' | null;
  minute: boolean;
  status: 'live' | 'resolved' | 'voided';
  /** A branch live when its proposal was decided: closed to buys and sells (proposal_closed). */
  closed: boolean;
  pool: bigint;
  reserve: bigint;
  funder: string | null;
  funded: boolean;
  traded: boolean;
}
interface MPos {
  higher: bigint;
  lower: bigint;
  net: bigint;
}
interface MOrder {
  id: string;
  agent: string;
  market: string;
  reserve: bigint;
  open: boolean;
}
interface MProposal {
  id: string;
  proposer: string;
  status: 'pending' | 'approved' | 'declined' | 'withdrawn';
}
interface Model {
  agents: MAgent[]; // [0] is the workspace owner
  metrics: Array<{ id: string; deleted: boolean }>;
  markets: MMarket[];
  positions: Map<string, MPos>;
  orders: MOrder[];
  proposals: MProposal[];
  wsAlive: boolean;
  /** Credits issued into this run (master credits). */
  minted: bigint;
  /** Credits that left the run's accounts for the platform treasury (heirless deletions, funderless pools). */
  toTreasury: bigint;
}
interface Real {
  app: TestApp;
  ws: TestWorkspace;
  /** Start of the run's clock (the minute book's period is the next minute). */
  t0: number;
}

const NANO = 1_000_000_000n;
const pick = <T,>(xs: T[], i: number): T | undefined => (xs.length ? xs[i % xs.length] : undefined);
const liveAgents = (m: Model) => m.agents.filter((a) => !a.deleted);
const posKey = (market: string, agent: string) => `${market}|${agent}`;
const pos = (m: Model, market: string, agent: string): MPos => m.positions.get(posKey(market, agent)) ?? { higher: 0n, lower: 0n, net: 0n };
const agentById = (m: Model, id: string | null) => m.agents.find((a) => a.id === id && !a.deleted);
const credit = (n: bigint) => toCredits(n);

/**
 * A request, sent again while it answers 503 service_unavailable: the documented retryable answer
 * (nothing was written), which a shared database out of connections gives; not what the fuzz looks for.
 */
async function http(send: () => PromiseLike<{ status: number; body: any; headers: Record<string, string> }>) {
  for (let i = 0; ; i++) {
    const res = await send();
    if (res.status !== 503 || res.body?.code !== 'service_unavailable' || i >= 10) return res;
    await new Promise((ok) => setTimeout(ok, 1000 * Number(res.headers['retry-after'] ?? 1)));
  }
}
async function register(app: TestApp, prefix: string): Promise<{ id: string; key: string; nickname: string }> {
  const nickname = uniqueName(prefix);
  const res = await http(() => app.http.post('/api/agents/register').send({ name: nickname, operator: 'ops@example.com' }));
  if (res.status !== 201) fail('register', res);
  return { id: res.body.agentId, key: res.body.apiKey, nickname };
}
async function issue(app: TestApp, agentId: string, credits: number): Promise<void> {
  const res = await http(() => app.http.post(`/api/agents/${agentId}/credit`).set('X-API-Key', app.masterKey).send({ amount: credits, reason: 'fuzz' }));
  if (res.status !== 200) fail('master credit', res);
}

let ran = 0;
let current = '';
let wasRefused = false;
const ranByKind = new Map<string, number>();
/** Commands answered with the refusal the model expected (the rest went through). */
const refused = new Map<string, number>();

function fail(what: string, res: { status: number; body: unknown }): never {
  throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
}
function expectCode(what: string, res: { status: number; body: Json }, status: number, code: string): void {
  wasRefused = true;
  if (res.status !== status || res.body?.code !== code) fail(`${what}: expected ${status} ${code}`, res);
}
function eq(what: string, actual: bigint, expected: bigint): void {
  if (actual !== expected) throw new Error(`${what}: service ${actual} nano, model ${expected} nano (off by ${actual - expected})`);
}

/** The pool's remainder (dust included) back to its funder; the treasury's when the funder is gone. */
function returnPool(m: Model, mk: MMarket): void {
  const to = agentById(m, mk.funder);
  if (to) to.balance += mk.pool;
  else m.toTreasury += mk.pool;
  mk.pool = 0n;
}
function cancelOrdersOf(m: Model, mk: MMarket): void {
  for (const o of m.orders.filter((x) => x.market === mk.id && x.open)) {
    o.open = false;
    mk.reserve -= o.reserve;
    agentById(m, o.agent)!.balance += o.reserve;
  }
}
/** Void: each holder's positive net cost back (pro rata if the pool cannot cover them), then the pool to its funder. */
function voidMarket(m: Model, mk: MMarket): bigint {
  if (mk.status !== 'live') return 0n;
  cancelOrdersOf(m, mk);
  const holders = [...m.positions].filter(([k]) => k.startsWith(`${mk.id}|`));
  const owed = holders.map(([k, p]) => ({ agent: k.split('|')[1], net: p.net > 0n ? p.net : 0n }));
  const total = owed.reduce((s, o) => s + o.net, 0n);
  const pool = mk.pool;
  let refunded = 0n;
  for (const o of owed) {
    const pay = total <= pool ? o.net : (o.net * pool) / total;
    mk.pool -= pay;
    refunded += pay;
    agentById(m, o.agent)!.balance += pay;
  }
  returnPool(m, mk);
  mk.status = 'voided';
  return refunded;
}
/** Resolve at a quarter of the range (v = k/4 exactly): each holder paid with one floor. */
function resolveMarket(m: Model, mk: MMarket, k: bigint): bigint {
  if (mk.status !== 'live') return 0n;
  cancelOrdersOf(m, mk);
  let total = 0n;
  for (const [key, p] of m.positions) {
    if (!key.startsWith(`${mk.id}|`)) continue;
    const pay = (p.higher * k + p.lower * (4n - k)) / 4n;
    if (pay > mk.pool) throw new Error(`model: pool ${mk.id} cannot pay ${pay}`);
    mk.pool -= pay;
    total += pay;
    agentById(m, key.split('|')[1])!.balance += pay;
  }
  returnPool(m, mk);
  mk.status = 'resolved';
  return total;
}

const asOwner = (r: Real) => ({ 'X-Agent-Key': r.ws.owner.key, 'X-Workspace-Id': r.ws.id });
const asAgent = (r: Real, a: MAgent) => ({ 'X-Agent-Key': a.key, 'X-Workspace-Id': r.ws.id });

/** Every live participant's balance (over the API), every pool and reserve, conservation, the ledger invariant. */
async function checkAgainstModel(m: Model, r: Real, after: string): Promise<void> {
  try {
    for (const a of liveAgents(m)) {
      const res = await http(() => r.app.http.get(`/api/agents/${a.id}/balance`).set('X-API-Key', r.app.masterKey));
      if (res.status !== 200) fail(`balance of ${a.nickname}`, res);
      eq(`balance of ${a.nickname}`, toNano(res.body.balance), a.balance);
    }
    const ids = m.markets.flatMap((mk) => [`pool:${mk.id}`, `reserve:${mk.id}`]);
    const rows: Array<{ id: string; b: string }> = ids.length ? await r.app.deps.ds.query(`SELECT id, balance::text AS b FROM accounts WHERE id = ANY($1)`, [ids]) : [];
    const held = new Map(rows.map((x) => [x.id, BigInt(x.b)]));
    let sum = 0n;
    for (const mk of m.markets) {
      eq(`pool of ${mk.id}${mk.proposalId ? ` (${mk.branch} branch)` : ''}`, held.get(`pool:${mk.id}`) ?? 0n, mk.pool);
      eq(`reserve of ${mk.id}`, held.get(`reserve:${mk.id}`) ?? 0n, mk.reserve);
      sum += mk.pool + mk.reserve;
    }
    for (const a of liveAgents(m)) sum += a.balance;
    eq('credits of the run (participants + pools + reserves) against issued minus sent to the treasury', sum, m.minted - m.toTreasury);
    const inv = await checkLedgerInvariant(r.app.deps.ds);
    if (!inv.ok) throw new Error(`ledger invariant broken: ${JSON.stringify({ ...inv, total: inv.total.toString() })}`);
  } catch (err) {
    (err as Error).message = `after ${after}: ${(err as Error).message}`;
    throw err;
  }
}


abstract class Cmd implements fc.AsyncCommand<Model, Real> {
  abstract check(m: Readonly<Model>): boolean;
  abstract apply(m: Model, r: Real): Promise<void>;
  abstract toString(): string;
  async run(m: Model, r: Real): Promise<void> {
    ran++;
    current = this.constructor.name;
    ranByKind.set(current, (ranByKind.get(current) ?? 0) + 1);
    wasRefused = false;
    await this.apply(m, r);
    if (wasRefused) refused.set(current, (refused.get(current) ?? 0) + 1);
    await checkAgainstModel(m, r, this.toString());
  }
}

class Register extends Cmd {
  constructor(readonly credits: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.agents.length < 7;
  }
  async apply(m: Model, r: Real) {
    const a = await register(r.app, 'sf');
    const join = await http(() => r.app.http.post(`/api/marketplace/${r.ws.id}/join`).set('X-Agent-Key', a.key));
    if (join.status !== 200) fail('join', join);
    m.agents.push({ ...a, balance: 0n, deleted: false });
    if (this.credits > 0) {
      await issue(r.app, a.id, this.credits);
      m.agents[m.agents.length - 1].balance += BigInt(this.credits) * NANO;
      m.minted += BigInt(this.credits) * NANO;
    }
  }
  toString(): string {
    return `register(+${this.credits})`;
  }
}

class MasterCredit extends Cmd {
  constructor(readonly who: number, readonly amount: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return liveAgents(m as Model).length > 0;
  }
  async apply(m: Model, r: Real) {
    const a = pick(liveAgents(m), this.who)!;
    const res = await http(() => r.app.http.post(`/api/agents/${a.id}/credit`).set('X-API-Key', r.app.masterKey).send({ amount: this.amount, reason: 'fuzz' }));
    if (res.status !== 200) fail('master credit', res);
    a.balance += toNano(this.amount);
    m.minted += toNano(this.amount);
  }
  toString(): string {
    return `credit(#${this.who}, ${this.amount})`;
  }
}

class Transfer extends Cmd {
  constructor(readonly from: number, readonly to: number, readonly amount: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return liveAgents(m as Model).length > 1;
  }
  async apply(m: Model, r: Real) {
    const live = liveAgents(m);
    const a = pick(live, this.from)!;
    const b = pick(live.filter((x) => x !== a), this.to)!;
    const amount = toNano(this.amount);
    const res = await http(() => r.app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).send({ toAgent: b.nickname, amount: this.amount, memo: 'fuzz' }));
    if (amount > a.balance) return expectCode('overdrawn transfer', res, 409, 'insufficient_balance');
    if (res.status !== 200) fail('transfer', res);
    if (toNano(res.body.amount) !== amount) fail('transfer amount', res);
    a.balance -= amount;
    b.balance += amount;
  }
  toString(): string {
    return `transfer(#${this.from} -> #${this.to}, ${this.amount})`;
  }
}

/** A metric and its books, paid by the owner (each book's liquidity into its pool). */
async function addMetric(m: Model, r: Real, value: number, minute: boolean): Promise<void> {
  const owner = m.agents[0];
  const timePreference = minute ? { enabled: true, halfLife: 1, customHorizons: ['+1min'] } : { enabled: true, halfLife: 1 };
  const res = await http(() => r.app.http.post('/api/metrics').set(asOwner(r)).send({ name: uniqueName('m'), value, timePreference }));
  if (res.status !== 201) fail('create metric', res);
  m.metrics.push({ id: res.body.id, deleted: false });
  const list = await http(() => r.app.http.get(`/api/predictions/markets?metricId=${res.body.id}&limit=200`).set(asOwner(r)));
  if (list.status !== 200) fail('books of the metric', list);
  for (const b of list.body as Json[]) {
    const liquidity = toNano(b.liquidity);
    m.markets.push({
      id: b.id,
      metricId: res.body.id,
      proposalId: null,
      branch: null,
      minute: String(b.targetDate).includes(':'),
      status: 'live',
      closed: false,
      pool: liquidity,
      reserve: 0n,
      funder: owner.id,
      funded: liquidity > 0n,
      traded: false,
    });
    owner.balance -= liquidity;
  }
}

class CreateMetric extends Cmd {
  constructor(readonly value: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.metrics.filter((x) => !x.deleted).length < 3;
  }
  apply(m: Model, r: Real): Promise<void> {
    return addMetric(m, r, this.value, false);
  }
  toString(): string {
    return `metric(${this.value})`;
  }
}

class Propose extends Cmd {
  constructor(readonly who: number, readonly liquidity: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.metrics.some((x) => !x.deleted) && m.proposals.length < 4;
  }
  async apply(m: Model, r: Real) {
    const a = pick(liveAgents(m), this.who)!;
    const leaves = m.metrics.filter((x) => !x.deleted).length;
    const cost = BigInt(2 * leaves) * toNano(this.liquidity);
    const res = await http(() => r.app.http.post('/api/proposals').set(asAgent(r, a)).send({ title: uniqueName('p'), liquidity: this.liquidity }));
    if (cost > a.balance) return expectCode('unaffordable proposal', res, 400, 'insufficient_balance');
    if (res.status !== 200) fail('proposal', res);
    const books: Json[] = res.body.conditionalMarkets;
    if (books.length !== 2 * leaves) fail(`a branch pair per live metric (${leaves})`, res);
    m.proposals.push({ id: res.body.id, proposer: a.id, status: 'pending' });
    for (const b of books) {
      const liquidity = toNano(b.liquidity);
      eq('branch liquidity', liquidity, toNano(this.liquidity));
      m.markets.push({ id: b.id, metricId: b.metricId, proposalId: res.body.id, branch: b.branch, minute: false, status: 'live', closed: false, pool: liquidity, reserve: 0n, funder: a.id, funded: liquidity > 0n, traded: false });
    }
    a.balance -= cost;
  }
  toString(): string {
    return `propose(#${this.who}, liquidity ${this.liquidity})`;
  }
}

/** Why the model expects a trade on this book to be refused (null: it should go through). */
function refusal(m: Model, mk: MMarket): [number, string] | null {
  if (!m.wsAlive) return null; // asserted separately
  // Its metric deleted, the book (voided) is no longer found in the workspace.
  if (m.metrics.find((x) => x.id === mk.metricId)?.deleted) return [404, 'market_not_found'];
  // A decided proposal's branches live at its decision answer proposal_closed, voided or not (spec §3.1).
  if (mk.closed) return [400, 'proposal_closed'];
  if (mk.status === 'resolved') return [400, 'market_resolved'];
  if (mk.status === 'voided') return [400, 'market_voided'];
  if (!mk.funded) return [400, 'market_unfunded'];
  return null;
}

class Buy extends Cmd {
  constructor(
    readonly who: number,
    readonly market: number,
    readonly direction: 'higher' | 'lower',
    readonly amount: number,
    /** Sent with an Idempotency-Key, then sent again: the retry replays and moves nothing. */
    readonly retried = false,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.agents.length > 1 && m.markets.length > 0;
  }
  async apply(m: Model, r: Real) {
    const a = pick(liveAgents(m), this.who)!;
    // Two times in three a book the model thinks tradable (when there is one); else any, for the refusals.
    const open = m.markets.filter((x) => !refusal(m, x));
    const mk = pick(this.market % 3 !== 0 && open.length ? open : m.markets, this.market)!;
    const body = { marketId: mk.id, direction: this.direction, amount: this.amount };
    const dry = await http(() => r.app.http.post('/api/predictions/trade').set(asAgent(r, a)).send({ ...body, dryRun: true }));
    const key = `sf-${randomUUID()}`;
    const send = () => http(() => r.app.http.post('/api/predictions/trade').set({ ...asAgent(r, a), ...(this.retried ? { 'Idempotency-Key': key } : {}) }).send(body));
    const real = await send();
    const no = refusal(m, mk);
    if (no) {
      expectCode('dry run', dry, no[0], no[1]);
      return expectCode('trade', real, no[0], no[1]);
    }
    if (toNano(this.amount) > a.balance) {
      if (dry.status !== 200 || dry.body.affordable !== false) fail('dry run of an overspend: affordable false', dry);
      return expectCode('overspend', real, 400, 'insufficient_balance');
    }
    if (dry.status !== 200) fail('dry run', dry);
    if (real.status !== 200) fail('trade', real);
    if (real.body.limitFills?.length) fail('the model keeps resting orders out of reach of trades', real);
    const cost = toNano(real.body.cost);
    const shares = toNano(real.body.shares);
    const redeemed = toNano(real.body.redeemed);
    eq('dry-run cost against the trade', toNano(dry.body.cost), cost);
    eq('dry-run shares against the trade', toNano(dry.body.shares), shares);
    if (cost > toNano(this.amount) || cost <= 0n) fail(`cost within the amount ${this.amount}`, real);
    const p = pos(m, mk.id, a.id);
    const other = this.direction === 'higher' ? p.lower : p.higher;
    eq('redeemed pairs (the opposite side held, matched)', redeemed, other < shares ? other : shares);
    const side = (this.direction === 'higher' ? p.higher : p.lower) + shares - redeemed;
    const opposite = other - redeemed;
    const next = this.direction === 'higher' ? { higher: side, lower: opposite } : { higher: opposite, lower: side };
    m.positions.set(posKey(mk.id, a.id), { ...next, net: p.net + cost - redeemed });
    const held = next.higher > 0n ? next.higher : next.lower;
    eq('position after the trade', toNano(real.body.position.shares), held);
    a.balance += redeemed - cost;
    eq('balance in the answer', toNano(real.body.balance), a.balance);
    mk.pool += cost - redeemed;
    mk.traded = true;
    if (this.retried) {
      const again = await send();
      if (again.status !== 200 || again.body.idempotentReplay !== true || again.body.tradeId !== real.body.tradeId) fail('the retry replays the first trade', again);
      eq('replayed cost', toNano(again.body.cost), cost);
    }
  }
  toString(): string {
    return `buy(#${this.who}, book ${this.market}, ${this.direction}, ${this.amount}${this.retried ? ', retried' : ''})`;
  }
}

class Sell extends Cmd {
  constructor(readonly who: number, readonly market: number, readonly quarters: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && [...m.positions.values()].some((p) => p.higher + p.lower > 0n);
  }
  async apply(m: Model, r: Real) {
    const holdings = [...m.positions].filter(([k, p]) => p.higher + p.lower > 0n && agentById(m, k.split('|')[1]));
    const [key, p] = pick(holdings, this.who + this.market)!;
    const [marketId, agentId] = key.split('|');
    const a = agentById(m, agentId)!;
    const mk = m.markets.find((x) => x.id === marketId)!;
    const direction = p.higher > 0n ? 'higher' : 'lower';
    const heldShares = p.higher > 0n ? p.higher : p.lower;
    const sell = (heldShares * BigInt(this.quarters)) / 4n;
    if (sell === 0n) return;
    const body = { marketId, direction, sellShares: credit(sell) };
    const dry = await http(() => r.app.http.post('/api/predictions/trade').set(asAgent(r, a)).send({ ...body, dryRun: true }));
    const real = await http(() => r.app.http.post('/api/predictions/trade').set(asAgent(r, a)).send(body));
    const no = refusal(m, mk);
    if (no) {
      expectCode('dry run', dry, no[0], no[1]);
      return expectCode('sell', real, no[0], no[1]);
    }
    if (real.status !== 200) fail('sell', real);
    const proceeds = toNano(real.body.proceeds);
    eq('dry-run proceeds against the sell', toNano(dry.body.proceeds), proceeds);
    eq('shares sold', toNano(real.body.shares), sell);
    if (proceeds < 0n || proceeds > sell) fail('proceeds within [0, shares]', real);
    const left = heldShares - sell;
    m.positions.set(key, { higher: direction === 'higher' ? left : 0n, lower: direction === 'lower' ? left : 0n, net: p.net - proceeds });
    a.balance += proceeds;
    eq('balance in the answer', toNano(real.body.balance), a.balance);
    mk.pool -= proceeds;
    mk.traded = true;
  }
  toString(): string {
    return `sell(holding ${this.who + this.market}, ${this.quarters}/4)`;
  }
}

/** A resting buy far from the price (limit 50 or 950 on 0..1000: price 0.05): it reserves, and no fuzz trade reaches it. */
class PlaceOrder extends Cmd {
  constructor(readonly who: number, readonly market: number, readonly direction: 'higher' | 'lower', readonly shares: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.agents.length > 1 && m.markets.some((x) => !x.proposalId && x.status === 'live');
  }
  async apply(m: Model, r: Real) {
    const a = pick(liveAgents(m), this.who)!;
    const mk = pick(m.markets.filter((x) => !x.proposalId && x.status === 'live'), this.market)!;
    const reserve = (toNano(this.shares) * 5n) / 100n;
    const order = { marketId: mk.id, direction: this.direction, limit: this.direction === 'higher' ? 50 : 950, shares: this.shares };
    const res = await http(() => r.app.http.post('/api/predictions/orders').set(asAgent(r, a)).send(order));
    if (reserve > a.balance) return expectCode('unaffordable order', res, 400, 'insufficient_balance');
    if (res.status !== 200) fail('place order', res);
    if (res.body.status !== 'open' || res.body.immediate.shares !== 0) fail('an order out of reach rests whole', res);
    eq('reserved', toNano(res.body.reserved), reserve);
    m.orders.push({ id: res.body.id, agent: a.id, market: mk.id, reserve, open: true });
    a.balance -= reserve;
    mk.reserve += reserve;
  }
  toString(): string {
    return `order(#${this.who}, book ${this.market}, ${this.direction}, ${this.shares} shares)`;
  }
}

class CancelOrder extends Cmd {
  constructor(readonly which: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.orders.some((o) => agentById(m as Model, o.agent));
  }
  async apply(m: Model, r: Real) {
    const o = pick(m.orders.filter((x) => agentById(m, x.agent)), this.which)!;
    const a = agentById(m, o.agent)!;
    const res = await http(() => r.app.http.delete(`/api/predictions/orders/${o.id}`).set(asAgent(r, a)));
    // Deleting a metric deletes its books' rows, their (closed) orders with them.
    const mk = m.markets.find((x) => x.id === o.market)!;
    if (m.metrics.find((x) => x.id === mk.metricId)?.deleted) return expectCode('cancelling an order of a deleted metric', res, 404, 'order_not_found');
    if (!o.open) return expectCode('second cancel', res, 409, 'order_not_open');
    if (res.status !== 200) fail('cancel', res);
    eq('returned', toNano(res.body.returned), o.reserve);
    o.open = false;
    a.balance += o.reserve;
    mk.reserve -= o.reserve;
  }
  toString(): string {
    return `cancel(order ${this.which})`;
  }
}

/** Fund an unfunded book (a branch of a proposal with liquidity 0): the funder's credits become its pool. */
class Fund extends Cmd {
  constructor(readonly who: number, readonly market: number, readonly credits: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.markets.length > 0;
  }
  async apply(m: Model, r: Real) {
    const a = pick(liveAgents(m), this.who)!;
    // Unfunded books first when there are any (else a funded one, which is refused).
    const unfunded = m.markets.filter((x) => !x.funded);
    const mk = pick(unfunded.length ? unfunded : m.markets, this.market)!;
    const res = await http(() => r.app.http.post(`/api/predictions/markets/${mk.id}/fund`).set(asAgent(r, a)).send({ credits: this.credits }));
    if (m.metrics.find((x) => x.id === mk.metricId)?.deleted) return expectCode('funding a book of a deleted metric', res, 404, 'market_not_found');
    if (mk.status !== 'live' || mk.funded || mk.closed) return expectCode('funding a funded, ended or decided book', res, 409, 'conflict');
    if (toNano(this.credits) > a.balance) return expectCode('unaffordable funding', res, 400, 'insufficient_balance');
    if (res.status !== 200) fail('fund', res);
    eq('subsidy', toNano(res.body.subsidy), toNano(this.credits));
    a.balance -= toNano(this.credits);
    eq('balance in the answer', toNano(res.body.balance), a.balance);
    mk.pool += toNano(this.credits);
    mk.funded = true;
    mk.funder = a.id;
  }
  toString(): string {
    return `fund(#${this.who}, book ${this.market}, ${this.credits})`;
  }
}

/** The owner voids a baseline book by hand: refunds at net cost, the pool's remainder to its funder. */
class VoidByHand extends Cmd {
  constructor(readonly market: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.markets.length > 0;
  }
  async apply(m: Model, r: Real) {
    const mk = pick(m.markets, this.market)!;
    const res = await http(() => r.app.http.post(`/api/predictions/markets/${mk.id}/void`).set(asOwner(r)).send({ reason: 'fuzz' }));
    if (m.metrics.find((x) => x.id === mk.metricId)?.deleted) return expectCode('voiding a book of a deleted metric', res, 404, 'market_not_found');
    if (mk.proposalId) return expectCode('voiding a proposal branch by hand (ended or not)', res, 409, 'conflict');
    if (mk.status === 'resolved') return expectCode('voiding a resolved book', res, 400, 'market_resolved');
    if (mk.status === 'voided') return expectCode('voiding a voided book', res, 400, 'market_voided');
    if (res.status !== 200) fail('void', res);
    eq('refunded', toNano(res.body.refunded), voidMarket(m, mk));
  }
  toString(): string {
    return `void(book ${this.market})`;
  }
}

const QUARTER_VALUES = [0, 250, 500, 750, 1000];

class Settle extends Cmd {
  constructor(readonly metric: number, readonly k: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.metrics.some((x) => !x.deleted);
  }
  async apply(m: Model, r: Real) {
    const metric = pick(m.metrics.filter((x) => !x.deleted), this.metric)!;
    const res = await http(() => r.app.http.post(`/api/metrics/${metric.id}/settle`).set(asOwner(r)).send({ value: QUARTER_VALUES[this.k], reason: 'fuzz' }));
    if (res.status !== 200) fail('settle', res);
    const live = m.markets.filter((x) => x.metricId === metric.id && x.status === 'live');
    if ([...res.body.settled].sort().join() !== live.map((x) => x.id).sort().join()) fail(`settled the live books ${live.map((x) => x.id)}`, res);
    let total = 0n;
    for (const mk of live) total += resolveMarket(m, mk, BigInt(this.k));
    eq('totalPayout', toNano(res.body.totalPayout), total);
  }
  toString(): string {
    return `settle(metric ${this.metric}, at ${QUARTER_VALUES[this.k]})`;
  }
}

/** A reading inside the minute book's period, then the clock past it and the workspace's due books resolved. */
class ReadingAndResolve extends Cmd {
  constructor(readonly k: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.markets.some((x) => x.minute && x.status === 'live');
  }
  async apply(m: Model, r: Real) {
    const mk = m.markets.find((x) => x.minute && x.status === 'live')!;
    r.app.clock.set(new Date(r.t0 + 60_000)); // inside the next minute (t0 is hh:mm:30)
    const put = await http(() => r.app.http.put(`/api/metrics/${mk.metricId}`).set(asOwner(r)).send({ value: QUARTER_VALUES[this.k] }));
    if (put.status !== 200) fail('reading', put);
    r.app.clock.set(new Date(r.t0 + 95_000)); // its period over
    const res = await http(() => r.app.http.post('/api/predictions/resolve').set(asOwner(r)).send({}));
    if (res.status !== 200) fail('resolve', res);
    if (JSON.stringify(res.body.resolved) !== JSON.stringify([mk.id])) fail(`resolved the minute book ${mk.id} only`, res);
    resolveMarket(m, mk, BigInt(this.k));
  }
  toString(): string {
    return `reading(${QUARTER_VALUES[this.k]}) + resolve`;
  }
}

class Decide extends Cmd {
  constructor(readonly which: number, readonly action: 'approve' | 'decline' | 'withdraw') {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.proposals.length > 0;
  }
  async apply(m: Model, r: Real) {
    const p = pick(m.proposals, this.which)!;
    const proposer = agentById(m, p.proposer);
    // Withdrawal is the proposer's (the owner when the proposer is gone); approval and decline the owner's.
    const who = this.action === 'withdraw' && proposer ? asAgent(r, proposer) : asOwner(r);
    const res = await http(() => r.app.http.post(`/api/proposals/${p.id}/${this.action}`).set(who).send({}));
    if (p.status !== 'pending') {
      if (res.status < 400 || res.status >= 500 || typeof res.body?.code !== 'string') fail('a decision on a decided proposal is a coded 4xx', res);
      return;
    }
    if (res.status !== 200) fail(this.action, res);
    p.status = this.action === 'approve' ? 'approved' : this.action === 'decline' ? 'declined' : 'withdrawn';
    for (const mk of m.markets.filter((x) => x.proposalId === p.id && x.status === 'live')) {
      const keep = (this.action === 'approve' && mk.branch === 'approved') || (this.action === 'decline' && mk.branch === 'declined');
      mk.closed = true;
      if (!keep) voidMarket(m, mk);
    }
  }
  toString(): string {
    return `${this.action}(proposal ${this.which})`;
  }
}

class DeleteMetric extends Cmd {
  constructor(readonly which: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.wsAlive && m.metrics.some((x) => !x.deleted);
  }
  async apply(m: Model, r: Real) {
    const metric = pick(m.metrics.filter((x) => !x.deleted), this.which)!;
    const res = await http(() => r.app.http.delete(`/api/metrics/${metric.id}`).set(asOwner(r)));
    const live = m.markets.filter((x) => x.metricId === metric.id && x.status === 'live');
    if (live.some((x) => x.traded)) return expectCode('deleting a metric with a traded live book', res, 409, 'conflict');
    if (res.status !== 204) fail('delete metric', res);
    metric.deleted = true;
    for (const mk of live) voidMarket(m, mk);
  }
  toString(): string {
    return `deleteMetric(${this.which})`;
  }
}

class DeleteParticipant extends Cmd {
  constructor(readonly who: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return liveAgents(m as Model).length > 0;
  }
  async apply(m: Model, r: Real) {
    // Half the time one with resting orders or holdings when there is one: where deletion has most to get right.
    const busy = liveAgents(m).filter((x) => m.orders.some((o) => o.open && o.agent === x.id) || [...m.positions.keys()].some((k) => k.endsWith(`|${x.id}`)));
    const a = pick(this.who % 2 === 0 && busy.length ? busy : liveAgents(m), this.who >> 1)!;
    const res = await http(() => r.app.http.delete(`/api/agents/${a.id}`).set('X-API-Key', r.app.masterKey));
    if (a === m.agents[0] && m.wsAlive) return expectCode('deleting the owner of a live workspace', res, 409, 'conflict');
    if (res.status !== 202) fail('delete participant', res);
    await waitForDeletion(r.app, res);
    // Its resting orders' reserves are its credits: they go with its balance (to the treasury: no parent, no creator).
    for (const o of m.orders.filter((x) => x.agent === a.id && x.open)) {
      o.open = false;
      a.balance += o.reserve;
      m.markets.find((x) => x.id === o.market)!.reserve -= o.reserve;
    }
    eq('creditsReturned', toNano(res.body.creditsReturned), a.balance);
    m.toTreasury += a.balance;
    a.balance = 0n;
    a.deleted = true;
    // Its positions go with it: their stake stays in the pools, which return to the funders.
    for (const k of [...m.positions.keys()]) if (k.endsWith(`|${a.id}`)) m.positions.delete(k);
  }
  toString(): string {
    return `deleteParticipant(#${this.who})`;
  }
}

class DeleteWorkspace extends Cmd {
  check(m: Readonly<Model>): boolean {
    return m.wsAlive;
  }
  async apply(m: Model, r: Real) {
    const res = await http(() => r.app.http.delete(`/api/workspaces/${r.ws.id}`).set(asOwner(r)));
    if (res.status !== 202) fail('delete workspace', res);
    await waitForDeletion(r.app, res);
    m.wsAlive = false;
    for (const mk of m.markets) voidMarket(m, mk);
  }
  toString(): string {
    return 'deleteWorkspace';
  }
}

/** After the workspace is gone: a trade on one of its books is a coded 4xx and changes nothing. */
class TradeInDeletedWorkspace extends Cmd {
  constructor(readonly who: number, readonly market: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return !m.wsAlive && m.markets.length > 0 && liveAgents(m as Model).length > 0;
  }
  async apply(m: Model, r: Real) {
    const a = pick(liveAgents(m), this.who)!;
    const mk = pick(m.markets, this.market)!;
    const res = await http(() => r.app.http.post('/api/predictions/trade').set(asAgent(r, a)).send({ marketId: mk.id, direction: 'higher', amount: 1 }));
    if (res.status < 400 || res.status >= 500 || typeof res.body?.code !== 'string') fail('a trade in a deleted workspace is a coded 4xx', res);
  }
  toString(): string {
    return `tradeInDeletedWorkspace(#${this.who}, book ${this.market})`;
  }
}

const idx = fc.nat({ max: 50 });
const side = fc.constantFrom<'higher' | 'lower'>('higher', 'lower');
const decision = fc.constantFrom<'approve' | 'decline' | 'withdraw'>('approve', 'decline', 'withdraw');
/** Each command kind with its weight: trading weighs most; deletions, which end much of a run, least. */
const weighted: Array<[number, fc.Arbitrary<Cmd>]> = [
  [2, fc.integer({ min: 0, max: 200 }).map((c) => new Register(c))],
  [1, fc.tuple(idx, fc.integer({ min: 1, max: 5000 })).map(([w, c]) => new MasterCredit(w, c / 100))],
  [2, fc.tuple(idx, idx, fc.integer({ min: 1, max: 30_000 })).map(([a, b, c]) => new Transfer(a, b, c / 100))],
  [1, fc.integer({ min: 50, max: 950 }).map((v) => new CreateMetric(v))],
  [2, fc.tuple(idx, fc.constantFrom(0, 0, 5, 10)).map(([w, l]) => new Propose(w, l))],
  [5, fc.tuple(idx, idx, side, fc.integer({ min: 10, max: 1500 }), fc.boolean()).map(([w, k, d, c, again]) => new Buy(w, k, d, c / 100, again))],
  [1, fc.tuple(idx, idx, fc.integer({ min: 1, max: 60 })).map(([w, k, c]) => new Fund(w, k, c))],
  [1, idx.map((k) => new VoidByHand(k))],
  [3, fc.tuple(idx, idx, fc.integer({ min: 1, max: 4 })).map(([w, k, q]) => new Sell(w, k, q))],
  [3, fc.tuple(idx, idx, side, fc.integer({ min: 1, max: 400 })).map(([w, k, d, n]) => new PlaceOrder(w, k, d, n))],
  [2, idx.map((o) => new CancelOrder(o))],
  [1, fc.tuple(idx, fc.integer({ min: 0, max: 4 })).map(([k, v]) => new Settle(k, v))],
  [1, fc.integer({ min: 0, max: 4 }).map((v) => new ReadingAndResolve(v))],
  [2, fc.tuple(idx, decision).map(([p, a]) => new Decide(p, a))],
  [1, idx.map((k) => new DeleteMetric(k))],
  [2, idx.map((w) => new DeleteParticipant(w))],
  [1, fc.constant(new DeleteWorkspace())],
  [1, fc.tuple(idx, idx).map(([w, k]) => new TradeInDeletedWorkspace(w, k))],
];
const commands = weighted.flatMap(([n, arb]) => Array.from({ length: n }, () => arb));

describe('stateful fuzzing against a model of balances', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    if (!app) return;
    await expectLedgerSound(app.deps);
    await app.close();
  });

  it('random sequences of commands keep every balance, pool and reserve where the model says, and the ledger sound', async () => {
    const started = Date.now();
    let runs = 0;
    // Each run a fresh hour of its own, mid-month (no monthly book comes due during a run).
    const now = new Date();
    const base = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 10, 0, 0, 30);
    const property = fc.asyncProperty(fc.commands(commands, { maxCommands: COMMANDS, size: 'max' }), async (cmds) => {
      const t0 = base + runs++ * 3_600_000;
      app.clock.set(new Date(t0));
      const owner = await register(app, 'sfo');
      await issue(app, owner.id, 5000);
      const res = await http(() => app.http.post('/api/workspaces').set('X-Agent-Key', owner.key).send({ name: uniqueName('sfws'), public: true }));
      if (res.status !== 201) fail('workspace', res);
      const real: Real = { app, ws: { id: res.body.id, slug: res.body.slug, owner }, t0 };
      const model: Model = {
        agents: [{ ...owner, balance: 5000n * NANO, deleted: false }],
        metrics: [],
        markets: [],
        positions: new Map(),
        orders: [],
        proposals: [],
        wsAlive: true,
        minted: 5000n * NANO,
        toTreasury: 0n,
      };
      await addMetric(model, real, 500, true);
      // Two traders to start with, so that the first commands have someone to trade with.
      for (const credits of [300, 100]) await new Register(credits).apply(model, real);
      await checkAgainstModel(model, real, 'setup');
      await fc.asyncModelRun(() => ({ model, real }), cmds);
    });
    const out = await fc.check(property, { seed: SEED, numRuns: RUNS, endOnFailure: process.env.FUZZ_SHRINK !== '1' });
    console.log(`stateful fuzz (seed ${SEED}, ${RUNS} runs of up to ${COMMANDS} commands): ${runs} runs, ${ran} commands run, ${((Date.now() - started) / 1000).toFixed(1)} s\n${[...ranByKind].map(([k, n]) => `${k}: ${n}${refused.get(k) ? ` (${refused.get(k)} refused)` : ''}`).join(', ')}`);
    if (out.failed) throw new Error(`stateful fuzz failed (seed ${SEED}; replay with FUZZ_SEED=${SEED}):\n${fc.defaultReportMessage(out)}\n${(out.errorInstance as Error)?.stack ?? String(out.errorInstance)}`);
    expect(app.contractViolations()).toEqual([]);
  }, 600_000);
});
