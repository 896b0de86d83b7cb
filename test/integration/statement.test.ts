import { buildWorkspace, registerAgent, type TestAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { balanceOf, createMetric, marketsOf, trade, trader } from '../helpers/markets';

/**
 * Issue 28 item 10: GET /agents/{id}/ledger, a participant's own statement. Metrics (their books'
 * subsidy), trades, a proposal's branch subsidy, a transfer and a spend; the statement reconciles
 * with the balance leg by leg, and paging covers every leg once.
 */
let app: TestApp;
useTestApp((a) => (app = a));

beforeAll(() => {
  const now = new Date();
  app.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 15, 12)));
});

interface Leg {
  id: string;
  kind: string;
  ledgerKind: string;
  amount: number;
  balanceAfter: number;
  createdAt: string;
  cause: Record<string, string>;
}

const nano = (credits: number) => BigInt(Math.round(credits * 1e9));

/** Every page of a statement at `limit` per page, newest first. */
async function statementOf(who: TestAgent, limit: number, as: { key?: string; master?: boolean } = {}): Promise<{ legs: Leg[]; pages: number; balance: number }> {
  const legs: Leg[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let balance = NaN;
  do {
    const req = app.http.get(`/api/agents/${who.id}/ledger?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    if (as.master) req.set('X-API-Key', app.masterKey);
    else req.set('X-Agent-Key', as.key ?? who.key);
    const res = await req;
    expect(res.status).toBe(200);
    expect(res.body.agentId).toBe(who.id);
    expect(res.body.entries.length).toBeLessThanOrEqual(limit);
    if (pages === 0) balance = res.body.balance;
    legs.push(...res.body.entries);
    cursor = res.body.nextCursor;
    pages += 1;
  } while (cursor);
  return { legs, pages, balance };
}

/** The statement's arithmetic: every leg once, newest first, each balance after = the older one + its amount, the sum = the balance. */
async function expectReconciles(who: TestAgent, legs: Leg[], balance: number): Promise<void> {
  const [{ n }] = await app.deps.ds.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = $1`, [`agent:${who.id}`]);
  expect(legs.length).toBe(n);
  expect(new Set(legs.map((l) => l.id)).size).toBe(legs.length);
  for (let i = 1; i < legs.length; i++) expect(BigInt(legs[i - 1].id) > BigInt(legs[i].id)).toBe(true);
  const oldestFirst = [...legs].reverse();
  let running = 0n;
  for (const l of oldestFirst) {
    running += nano(l.amount);
    expect(nano(l.balanceAfter)).toBe(running);
  }
  expect(running).toBe(nano(balance));
  expect(nano(legs[0].balanceAfter)).toBe(nano(await balanceOf(app, who)));
}

describe('GET /agents/{id}/ledger', () => {
  it('reconciles: subsidies, trades, a proposal, a transfer and a spend, paged 3 at a time, every leg once', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 5_000 });
    const m1 = await createMetric(app, ws, { value: 400 });
    const m2 = await createMetric(app, ws, { value: 700 });
    const t = await trader(app, ws, 1_000);
    const [book] = await marketsOf(app, ws, m1.id);
    expect((await trade(app, ws, t, { marketId: book.id, direction: 'higher', amount: 30 })).status).toBe(200);
    expect((await trade(app, ws, t, { marketId: book.id, direction: 'lower', amount: 12.5 })).status).toBe(200);
    const [book2] = await marketsOf(app, ws, m2.id);
    expect((await trade(app, ws, t, { marketId: book2.id, direction: 'lower', amount: 7 })).status).toBe(200);
    const p = await app.http.post('/api/proposals').set('X-Agent-Key', t.key).set('X-Workspace-Id', ws.id).send({ title: 'Ship it', liquidity: 4 });
    expect(p.status).toBe(200);
    const sent = await app.http.post('/api/agents/transfer').set('X-Agent-Key', t.key).send({ toAgent: ws.owner.id, amount: 25, memo: 'for the data' });
    expect(sent.status).toBe(200);
    const spent = await app.http.post('/api/agents/me/spend').set('X-Agent-Key', t.key).send({ amount: 3, type: 'tokens', reason: 'run 42' });
    expect(spent.status).toBe(200);

    const mine = await statementOf(t, 3);
    expect(mine.pages).toBeGreaterThan(2);
    await expectReconciles(t, mine.legs, mine.balance);
    const kinds = new Set(mine.legs.map((l) => l.kind));
    for (const k of ['credit', 'trade', 'subsidy', 'transfer', 'spend']) expect(kinds).toContain(k);
    const transferLeg = mine.legs.find((l) => l.kind === 'transfer')!;
    expect(transferLeg).toMatchObject({ amount: -25, cause: { transferId: sent.body.id } });
    expect(mine.legs.find((l) => l.kind === 'spend')).toMatchObject({ amount: -3, ledgerKind: 'spend:tokens', cause: { spendId: spent.body.id } });
    expect(mine.legs.filter((l) => l.kind === 'trade' && l.cause.marketId === book.id).length).toBeGreaterThanOrEqual(2);
    const branchSubsidy = mine.legs.filter((l) => l.kind === 'subsidy');
    expect(branchSubsidy.length).toBeGreaterThan(0);
    for (const l of branchSubsidy) expect(l.cause).toMatchObject({ proposalId: p.body.id, marketId: expect.any(String), branch: expect.stringMatching(/^(approved|declined)$/) });
    expect(mine.legs[mine.legs.length - 1]).toMatchObject({ kind: 'credit', amount: 1_000 });

    // The workspace owner: the operator's credit, its books' subsidy, the transfer in. Whole pages and one page agree.
    const owner = await statementOf(ws.owner, 2);
    await expectReconciles(ws.owner, owner.legs, owner.balance);
    expect(owner.legs.filter((l) => l.kind === 'subsidy').map((l) => l.cause.marketId)).toEqual(expect.arrayContaining([book.id, book2.id]));
    expect(owner.legs.find((l) => l.kind === 'transfer')).toMatchObject({ amount: 25, cause: { transferId: sent.body.id } });
    const onePage = await statementOf(ws.owner, 500, { master: true });
    expect(onePage.pages).toBe(1);
    expect(onePage.legs).toEqual(owner.legs);
  });

  it('is for the participant, its owner and the operator; scope account:read; a bad cursor is 400', async () => {
    const ws = await buildWorkspace(app, { public: true, ownerCredits: 100 });
    const stranger = await registerAgent(app);
    const res = await app.http.get(`/api/agents/${ws.owner.id}/ledger`).set('X-Agent-Key', stranger.key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('not_authorized');
    const narrow = await app.http.post(`/api/agents/${ws.owner.id}/keys`).set('X-Agent-Key', ws.owner.key).send({ scopes: ['workspace:read'] });
    expect(narrow.status).toBe(201);
    const denied = await app.http.get(`/api/agents/me/ledger`).set('X-Agent-Key', narrow.body.key ?? narrow.body.apiKey);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('scope_denied');
    const me = await app.http.get('/api/agents/me/ledger').set('X-Agent-Key', ws.owner.key);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ agentId: ws.owner.id, balance: 100, nextCursor: null });
    const bad = await app.http.get('/api/agents/me/ledger?cursor=bm9wZQ').set('X-Agent-Key', ws.owner.key);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'validation_failed', error: 'The query field "cursor" is refused: pass the nextCursor of a previous page unchanged.' });
    expect((await app.http.get('/api/agents/nobody-here/ledger').set('X-API-Key', app.masterKey)).status).toBe(404);
    // A bot's creator reads the bot's statement (the bot's initial credits moved from the creator).
    const bot = await app.http.post('/api/agents').set('X-Agent-Key', ws.owner.key).send({ agentId: `stmt-bot-${Date.now().toString(36)}`, initialCredits: 7 });
    expect(bot.status).toBe(201);
    const botStatement = await app.http.get(`/api/agents/${bot.body.agentId}/ledger`).set('X-Agent-Key', ws.owner.key);
    expect(botStatement.status).toBe(200);
    expect(botStatement.body).toMatchObject({ agentId: bot.body.agentId, balance: 7, entries: [{ kind: 'credit', ledgerKind: 'child_funding', amount: 7, balanceAfter: 7, cause: { creditedBy: ws.owner.id } }] });
    expect((await app.http.get(`/api/agents/${bot.body.agentId}/ledger`).set('X-Agent-Key', stranger.key)).status).toBe(403);
  });

  it('GET /help?q=ledger finds it', async () => {
    const help = await app.http.get('/api/help?q=ledger statement').expect(200);
    expect(help.body.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`)).toContain('GET /api/agents/{id}/ledger');
  });
});
