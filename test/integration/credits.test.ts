import { randomBytes } from 'node:crypto';
import { expectLedgerSound, useTestApp, type TestApp } from '../helpers/harness';
import { buildWorkspace, mint, registerAgent, type TestAgent } from '../helpers/factories';

/** Transfers, spending, the credit route's Idempotency-Key, and the chain routes with no chain configured. */
let app: TestApp;
useTestApp((a) => (app = a));

const key = () => `k-${randomBytes(6).toString('hex')}`;
const balance = async (a: TestAgent) => (await app.http.get(`/api/agents/${a.id}/balance`).set('X-Agent-Key', a.key)).body.balance as number;

describe('transfers', () => {
  it('moves credits atomically, answers the §2.12 row, and lists on both sides newest first', async () => {
    const [a, b] = [await registerAgent(app), await registerAgent(app)];
    await mint(app, a.id, 100);
    const res = await app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).send({ toAgent: b.nickname, amount: 12.5, memo: 'lunch' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ fromAgent: a.id, toAgent: b.id, amount: 12.5, memo: 'lunch', balance: 87.5 });
    expect(typeof res.body.id).toBe('string');
    await app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).send({ toAgent: b.id, amount: 0.000000001 }).expect(200);
    expect([await balance(a), await balance(b)]).toEqual([87.499999999, 12.500000001]);

    const out = await app.http.get('/api/agents/transfers?direction=out').set('X-Agent-Key', a.key).expect(200);
    expect(out.body.map((t: { amount: number }) => t.amount)).toEqual([0.000000001, 12.5]);
    const inB = await app.http.get('/api/agents/transfers?direction=in&limit=1').set('X-Agent-Key', b.key).expect(200);
    expect(inB.body).toHaveLength(1);
    expect((await app.http.get('/api/agents/transfers?direction=out').set('X-Agent-Key', b.key)).body).toEqual([]);
    // agentId is for the master key only.
    expect((await app.http.get(`/api/agents/transfers?agentId=${a.id}`).set('X-Agent-Key', b.key)).status).toBe(403);
    const master = await app.http.get(`/api/agents/transfers?agentId=${b.id}`).set('X-API-Key', app.masterKey).expect(200);
    expect(master.body).toHaveLength(2);
    expect((await app.http.get('/api/agents/transfers?limit=201').set('X-Agent-Key', a.key)).status).toBe(400);
    await expectLedgerSound(app.deps);
  });

  it('refuses what it must: short (409 with balance and amount), the master key, zero, a long memo, oneself, an unknown recipient', async () => {
    const [a, b] = [await registerAgent(app), await registerAgent(app)];
    await mint(app, a.id, 5);
    const short = await app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).send({ toAgent: b.id, amount: 6 });
    expect(short.status).toBe(409);
    expect(short.body).toMatchObject({ code: 'insufficient_balance', balance: 5, amount: 6 });
    const master = await app.http.post('/api/agents/transfer').set('X-API-Key', app.masterKey).send({ toAgent: b.id, amount: 1 });
    expect(master.status).toBe(403);
    expect(master.body.code).toBe('funds_move_forbidden');
    for (const body of [{ toAgent: b.id, amount: 0 }, { toAgent: b.id, amount: 1, memo: 'x'.repeat(201) }, { toAgent: a.id, amount: 1 }]) {
      expect((await app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).send(body)).status).toBe(400);
    }
    expect((await app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).send({ toAgent: 'nobody-at-all', amount: 1 })).status).toBe(404);
    expect([await balance(a), await balance(b)]).toEqual([5, 0]);
    await expectLedgerSound(app.deps);
  });

  it('applies one Idempotency-Key once: a replay answers the first result, another body is 409, a refused call does not consume its key', async () => {
    const [a, b] = [await registerAgent(app), await registerAgent(app)];
    await mint(app, a.id, 10);
    const k = key();
    const send = (amount: number, k2 = k) => app.http.post('/api/agents/transfer').set('X-Agent-Key', a.key).set('Idempotency-Key', k2).send({ toAgent: b.id, amount });
    const refused = await send(20);
    expect(refused.status).toBe(409);
    const [first, twin] = await Promise.all([send(20 - 17), send(3)]);
    expect([first.status, twin.status]).toEqual([200, 200]);
    expect(first.body.id).toBe(twin.body.id);
    expect([first.body.idempotentReplay, twin.body.idempotentReplay].filter(Boolean)).toEqual([true]);
    const again = await send(3);
    expect(again.body).toMatchObject({ id: first.body.id, idempotentReplay: true });
    const reuse = await send(4);
    expect(reuse.status).toBe(409);
    expect(reuse.body.code).toBe('idempotency_key_reuse');
    expect([await balance(a), await balance(b)]).toEqual([7, 3]);
    // Keys are the participant's own: b may use the same key.
    await app.http.post('/api/agents/transfer').set('X-Agent-Key', b.key).set('Idempotency-Key', k).send({ toAgent: a.id, amount: 1 }).expect(200);
    await expectLedgerSound(app.deps);
  });
});

describe('spend and credit', () => {
  it('spends tokens and purchase by the participant, betting by the operator only, into named sinks', async () => {
    const a = await registerAgent(app);
    const other = await registerAgent(app);
    await mint(app, a.id, 50);
    const sink = async (t: string) => BigInt((await app.deps.ds.query(`SELECT balance::text AS b FROM accounts WHERE id = $1`, [`spend:${t}`]))[0].b);
    const before = await sink('tokens');
    const res = await app.http.post(`/api/agents/${a.id}/spend`).set('X-Agent-Key', a.key).set('Idempotency-Key', 'spend-1').send({ amount: 2, type: 'tokens', reason: 'llm calls' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agentId: a.id, amount: 2, type: 'tokens', reason: 'llm calls', balance: 48 });
    const replay = await app.http.post(`/api/agents/${a.id}/spend`).set('X-Agent-Key', a.key).set('Idempotency-Key', 'spend-1').send({ amount: 2, type: 'tokens', reason: 'llm calls' });
    expect(replay.body).toMatchObject({ id: res.body.id, idempotentReplay: true });
    expect((await sink('tokens')) - before).toBe(2_000_000_000n);
    const rows = await app.deps.ds.query(`SELECT kind, memo FROM ledger_entries WHERE account_id = $1 AND kind LIKE 'spend:%'`, [`agent:${a.id}`]);
    expect(rows).toEqual([{ kind: 'spend:tokens', memo: 'llm calls' }]);

    expect((await app.http.post(`/api/agents/${a.id}/spend`).set('X-Agent-Key', a.key).send({ amount: 1, type: 'betting', reason: 'x' })).status).toBe(403);
    expect((await app.http.post(`/api/agents/${a.id}/spend`).set('X-Agent-Key', other.key).send({ amount: 1, type: 'purchase', reason: 'x' })).status).toBe(403);
    expect((await app.http.post(`/api/agents/${a.id}/spend`).set('X-API-Key', app.masterKey).send({ amount: 1, type: 'purchase', reason: 'x' })).status).toBe(403);
    const bet = await app.http.post(`/api/agents/${a.id}/spend`).set('X-API-Key', app.masterKey).send({ amount: 3, type: 'betting', reason: 'season pool' });
    expect(bet.body).toMatchObject({ type: 'betting', balance: 45 });
    const short = await app.http.post(`/api/agents/${a.id}/spend`).set('X-Agent-Key', a.key).send({ amount: 46, type: 'purchase', reason: 'too much' });
    expect(short.status).toBe(409);
    expect(short.body).toMatchObject({ code: 'insufficient_balance', balance: 45, amount: 46 });
    await expectLedgerSound(app.deps);
  });

  it('credit: the master key mints once per Idempotency-Key; a manager moves its own credits (409 when short)', async () => {
    const ws = await buildWorkspace(app, { ownerCredits: 10 });
    const member = await registerAgent(app);
    await app.deps.ds.query(`INSERT INTO memberships (workspace_id, agent_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [ws.id, member.id]);
    const k = key();
    const mintOnce = () => app.http.post(`/api/agents/${member.id}/credit`).set('X-API-Key', app.masterKey).set('Idempotency-Key', k).send({ amount: 5 });
    const first = await mintOnce();
    expect(first.body).toMatchObject({ ok: true, amount: 5, balance: 5, issued: true });
    expect((await mintOnce()).body).toMatchObject({ balance: 5, idempotentReplay: true });
    expect(await balance(member)).toBe(5);
    const move = await app.http.post(`/api/agents/${member.id}/credit`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ amount: 4 });
    expect(move.body).toMatchObject({ amount: 4, balance: 9, issued: false });
    const short = await app.http.post(`/api/agents/${member.id}/credit`).set('X-Agent-Key', ws.owner.key).set('X-Workspace-Id', ws.id).send({ amount: 7 });
    expect(short.status).toBe(409);
    expect(short.body).toMatchObject({ code: 'insufficient_balance', balance: 6 });
    await expectLedgerSound(app.deps);
  });
});

describe('the chain routes without a chain', () => {
  it('deposit-address answers 503 treasury_not_configured; deposit and withdraw refuse clearly; the wallet is validated and stored checksummed', async () => {
    const a = await registerAgent(app);
    const addr = await app.http.get('/api/agents/deposit-address');
    expect(addr.status).toBe(503);
    expect(addr.body.code).toBe('treasury_not_configured');
    const dep = await app.http.post(`/api/agents/${a.id}/deposit`).set('X-Agent-Key', a.key).send({ txHash: `0x${'ab'.repeat(32)}` });
    expect([dep.status, dep.body.code]).toEqual([503, 'treasury_not_configured']);
    expect((await app.http.post(`/api/agents/${a.id}/withdraw`).set('X-Agent-Key', a.key).send({ amount: 1 })).status).toBe(503);
    expect((await app.http.put(`/api/agents/${a.id}/wallet`).set('X-Agent-Key', a.key).send({ walletAddress: '0x123' })).status).toBe(400);
    const lower = '0x52908400098527886e0f7030069857d2e4169ee7';
    const w = await app.http.put(`/api/agents/me/wallet`).set('X-Agent-Key', a.key).send({ walletAddress: lower });
    expect(w.body).toMatchObject({ agentId: a.id, walletAddress: '0x52908400098527886E0F7030069857D2E4169EE7' });
    await expectLedgerSound(app.deps);
  });
});
