import type { Contract, Wallet } from 'ethers';
import { closeChains } from '../../src/chain/client';
import { startChain, type TestChain } from '../helpers/chain';
import { appendFileSync } from 'node:fs';
import { mint, registerAgent, type TestAgent } from '../helpers/factories';
import { signUp } from '../helpers/accounts';
import { connectThroughOAuth, resultBody } from '../helpers/mcp';
import { expectLedgerSound, startTestApp, type TestApp } from '../helpers/harness';
import { waitFor } from '../helpers/services';
import { launchChromium } from '../helpers/browser';

/**
 * Deposits and withdrawals against a real in-process chain (Hardhat Network + MockUSDC, 6 decimals).
 * 1 credit = 0.01 USD = 10,000 units; the buy fee is 2%; 3 confirmations. After every scenario the
 * ledger is sound and the treasury's on-chain token balance equals the ledger's chain account.
 */
let chain: TestChain;
let app: TestApp;
const CONFIRMATIONS = 3;
const env = () => ({
  // The OAuth issuer and the /mcp audience name the address the app gets (an assistant withdraws below).
  PUBLIC_BASE_URL: 'listening',
  CHAIN_RPC_URL: chain.url,
  CHAIN_ID: String(chain.chainId),
  USDC_ADDRESS: chain.usdc.target as string,
  TREASURY_PRIVATE_KEY: chain.treasuryKey,
  CONFIRMATIONS: String(CONFIRMATIONS),
  FINALITY_CONFIRMATIONS: '6',
  BUY_FEE_PERCENT: '2',
  CREDIT_VALUE_USD: '0.01',
  WITHDRAW_REVIEW_CREDITS: '5000',
  CHAIN_RECHECK_MS: '25',
  CHAIN_RECHECK_MAX_MS: '100',
});
const TREASURY_FLOAT = 50_000_000_000n; // 50,000 USDC minted to the treasury for withdrawals
/** Payments that reached the treasury but were rightly not credited (a sender that is not the wallet). */
let unclaimed = 0n;

beforeAll(async () => {
  chain = await startChain();
  await (await chain.usdc.getFunction('mint')(chain.treasury.address, TREASURY_FLOAT)).wait();
  app = await startTestApp(env());
}, 60_000);
afterAll(async () => {
  try {
    await app?.close();
  } finally {
    closeChains();
    await chain?.stop();
  }
});

/** Ledger sound, and the treasury holds its float plus what the ledger's chain account says came in. */
async function expectBooksMatchChain(): Promise<void> {
  await expectLedgerSound(app.deps);
  const [{ b }] = await app.deps.ds.query(`SELECT balance::text AS b FROM accounts WHERE id = 'onchain:usdc'`);
  const onchainUnits = (-BigInt(b) * 10_000n) / 1_000_000_000n;
  const held = (await chain.usdc.getFunction('balanceOf')(chain.treasury.address)) as bigint;
  expect(held - TREASURY_FLOAT - unclaimed).toBe(onchainUnits);
}

/** A participant with a funded wallet registered (on `a`, the suite's app by default). */
async function depositor(a = app): Promise<{ agent: TestAgent; wallet: Wallet }> {
  const agent = await registerAgent(a);
  const wallet = await chain.wallet();
  await a.http.put(`/api/agents/${agent.id}/wallet`).set('X-Agent-Key', agent.key).send({ walletAddress: wallet.address }).expect(200);
  return { agent, wallet };
}

/** A depositor holding `credits` issued by the operator. */
async function funded(credits: number, a = app) {
  const d = await depositor(a);
  await a.http.post(`/api/agents/${d.agent.id}/credit`).set('X-API-Key', a.masterKey).send({ amount: credits }).expect(200);
  return d;
}

async function pay(wallet: Wallet, units: bigint, opts: { token?: Contract; to?: string; gasLimit?: bigint } = {}): Promise<string> {
  const token = (opts.token ?? chain.usdc).connect(wallet) as Contract;
  const tx = await token.getFunction('transfer')(opts.to ?? chain.treasury.address, units, { gasLimit: opts.gasLimit ?? 100_000n });
  return tx.hash as string;
}

const submit = (a: TestAgent, txHash: string) => app.http.post(`/api/agents/${a.id}/deposit`).set('X-Agent-Key', a.key).send({ txHash });

async function settled(a: TestAgent, depositId: string, mineEach = 0) {
  return waitFor(`deposit ${depositId} to settle`, async () => {
    if (mineEach) await chain.mine(mineEach);
    const r = await app.http.get(`/api/agents/${a.id}/deposits/${depositId}`).set('X-Agent-Key', a.key);
    return r.body.status !== 'pending' ? r.body : null;
  });
}
const balance = async (a: TestAgent) => (await app.http.get(`/api/agents/${a.id}/balance`).set('X-Agent-Key', a.key)).body.balance as number;

describe('deposits', () => {
  it('deposit-address describes the chain', async () => {
    const r = await app.http.get('/api/agents/deposit-address').expect(200);
    expect(r.body).toEqual({ address: chain.treasury.address, chainId: 31337, asset: 'USDC', contract: chain.usdc.target, decimals: 6, confirmations: 3, creditValueUsd: 0.01, buyFeePercent: 2 });
    // Issue 56: public-config tells the truth where deposits work.
    expect((await app.http.get('/api/public-config').expect(200)).body.usdcSettlementEnabled).toBe(true);
  });

  it('credits a real deposit once (floor(paid / (value x 1.02)) credits, the rest to the fee account); the same txHash again is 409 with the first record', async () => {
    const { agent, wallet } = await depositor();
    const hash = await pay(wallet, 10_000_000n); // 10 USDC = 1000 credits gross -> 980 issued, 20 fee
    const first = await submit(agent, hash);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: 'pending', txHash: hash });
    const done = await settled(agent, first.body.id, 1);
    expect(done).toMatchObject({ status: 'credited', credits: 980, fee: 20, amountPaid: '10000000', fromAddress: wallet.address });
    expect(typeof done.blockHash).toBe('string');
    const again = await submit(agent, hash);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'deposit_duplicate', deposit: { id: first.body.id, status: 'credited' } });
    expect(await balance(agent)).toBe(980);
    const list = await app.http.get(`/api/agents/${agent.id}/deposits`).set('X-Agent-Key', agent.key).expect(200);
    expect(list.body.map((d: { id: string }) => d.id)).toEqual([first.body.id]);
    await expectBooksMatchChain();
  });

  it("a claim of someone else's txHash is 409 with the code and a sentence only; the first record shows only to its participant's owner and the operator", async () => {
    const owner = await registerAgent(app);
    const bot = await app.http.post('/api/agents').set('X-Agent-Key', owner.key).send({ agentId: `bot-${Date.now().toString(36)}` });
    expect(bot.status).toBe(201);
    const botId = bot.body.agentId as string;
    const wallet = await chain.wallet();
    await app.http.put(`/api/agents/${botId}/wallet`).set('X-Agent-Key', owner.key).send({ walletAddress: wallet.address }).expect(200);
    const hash = await pay(wallet, 2_040_000n); // 2.04 USDC = 200 credits, 4 fee
    const first = await app.http.post(`/api/agents/${botId}/deposit`).set('X-Agent-Key', owner.key).send({ txHash: hash });
    expect(first.status).toBe(202);
    const done = await waitFor('the bot deposit to be credited', async () => {
      await chain.mine(1);
      const r = await app.http.get(`/api/agents/${botId}/deposits/${first.body.id}`).set('X-Agent-Key', owner.key);
      return r.body.status === 'credited' ? r.body : null;
    });
    expect(done).toMatchObject({ credits: 200, fee: 4, amountPaid: '2040000', fromAddress: wallet.address });

    // A stranger (its own wallet registered or not) learns that the tx is taken, nothing else.
    const { agent: stranger } = await depositor();
    const theirs = await submit(stranger, hash);
    expect(theirs.status).toBe(409);
    expect(theirs.body).toEqual({
      code: 'deposit_duplicate',
      error: 'This transaction was already claimed as a deposit by another participant; each transaction credits once.',
      doc_url: '/api/guides/api-reference#error-deposit_duplicate',
    });
    for (const secret of [botId, wallet.address, '2040000', first.body.id]) expect(JSON.stringify(theirs.body)).not.toContain(secret);

    // The bot's owner, claiming it under its own id, and the operator see the first record.
    const mine = await app.http.post(`/api/agents/${owner.id}/deposit`).set('X-Agent-Key', owner.key).send({ txHash: hash });
    expect(mine.status).toBe(409);
    expect(mine.body.deposit).toMatchObject({ id: first.body.id, agentId: botId, fromAddress: wallet.address, amountPaid: '2040000', credits: 200 });
    const operator = await app.http.post(`/api/agents/${stranger.id}/deposit`).set('X-API-Key', app.masterKey).send({ txHash: hash });
    expect(operator.status).toBe(409);
    expect(operator.body.deposit).toMatchObject({ id: first.body.id, agentId: botId, credits: 200 });
    expect(await balance(stranger)).toBe(0);
    await expectBooksMatchChain();
  });

  it('rejects with a reason: another token, another recipient, a sender that is not the wallet, a reverted tx, no registered wallet', async () => {
    const { agent, wallet } = await depositor();
    const stranger = await chain.wallet();
    const noWallet = await registerAgent(app);
    const cases: Array<[TestAgent, string, RegExp]> = [
      [agent, await pay(wallet, 1_000_000n, { token: chain.otherToken }), /no Transfer of the configured token/],
      [agent, await pay(wallet, 1_000_000n, { to: stranger.address }), /no Transfer of the configured token/],
      [agent, await pay(stranger, 1_000_000n), /not from the registered wallet/],
      [agent, await pay(wallet, 10n ** 18n), /reverted/],
      [noWallet, await pay(stranger, 2_000_000n), /No wallet is registered/],
    ];
    for (const [who, hash, reason] of cases) {
      const r = await submit(who, hash);
      expect(r.status).toBe(202);
      const done = await settled(who, r.body.id, 1);
      expect(done.status).toBe('rejected');
      expect(done.reason).toMatch(reason);
    }
    unclaimed += 3_000_000n;
    expect([await balance(agent), await balance(noWallet)]).toEqual([0, 0]);
    await expectBooksMatchChain();
  });

  it('keeps an unconfirmed tx pending (re-checked, never rejected) and credits it once the blocks are there', async () => {
    const { agent, wallet } = await depositor();
    const hash = await pay(wallet, 5_100_000n); // 510 gross -> floor(500) issued, 10 fee
    const r = await submit(agent, hash);
    await waitFor('a few checks', async () => (await app.http.get(`/api/agents/${agent.id}/deposits/${r.body.id}`).set('X-Agent-Key', agent.key)).body.checks >= 3);
    expect((await app.http.get(`/api/agents/${agent.id}/deposits/${r.body.id}`).set('X-Agent-Key', agent.key)).body.status).toBe('pending');
    await chain.mine(CONFIRMATIONS);
    const done = await settled(agent, r.body.id);
    expect(done).toMatchObject({ status: 'credited', credits: 500, fee: 10 });
    await expectBooksMatchChain();
  });

  it('from the Get credits page, in Chromium, clicks only: the treasury address, the wallet registered, the txHash pasted, the deposit watched until it is credited', async () => {
    const person = await signUp(app);
    const wallet = await chain.wallet();
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', timezoneId: 'UTC' });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      expect((await context.request.post(`${base}/api/auth/sign-in/email`, { data: { email: person.email, password: person.password } })).status()).toBe(200);
      const page = await context.newPage();
      await page.goto(`${base}/credits`);
      expect(await page.locator('#treasury-address').innerText()).toBe(chain.treasury.address);
      await page.locator('#wallet-walletAddress').fill(wallet.address);
      await Promise.all([page.waitForURL(/done=wallet/), page.getByRole('button', { name: 'Register the wallet' }).click()]);
      // The person sends 1 USDC from their wallet (100 credits gross, 98 issued), then pastes the hash.
      const hash = await pay(wallet, 1_000_000n);
      await page.locator('#deposit-txHash').fill(hash);
      await Promise.all([page.waitForURL(/done=deposit/), page.getByRole('button', { name: 'Claim the deposit' }).click()]);
      const row = page.locator('tr[data-deposit]').first();
      expect(await row.count()).toBe(1);
      // Watched: while pending the page reloads itself (and says so); the blocks come, and it shows credited.
      if ((await row.getAttribute('data-status')) === 'pending') expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(1);
      const depositId = await row.getAttribute('data-deposit');
      await chain.mine(CONFIRMATIONS);
      // The service's own checks credit it while the chain goes on making blocks (as settled(…, 1) above);
      // the wait has the room a machine busy with the fault harness needs.
      await waitFor('the deposit to be credited', async () => {
        await chain.mine(1);
        return (await person.browser.get(`/api/agents/${person.agentId}/deposits/${depositId}`)).body.status === 'credited';
      }, 150_000, 250);
      // The page's own reload (or its Check again) shows it credited.
      await waitFor('the page to show the deposit credited', async () => {
        if ((await page.locator('tr[data-deposit]').first().getAttribute('data-status', { timeout: 5_000 })) === 'credited') return true;
        await Promise.all([
          page.waitForResponse((r) => r.url().includes('/credits') && r.request().isNavigationRequest(), { timeout: 10_000 }),
          page.locator('[data-watch="deposits"] button').click({ timeout: 5_000 }),
        ]);
        await page.waitForLoadState('load', { timeout: 10_000 });
        return false;
      }, 30_000, 250);
      expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
      expect(Number(await page.locator('main [data-field="balance"]').getAttribute('data-value'))).toBe(98);
      // A malformed hash is the API's sentence beside the field.
      await page.locator('#deposit-txHash').fill('0x1234');
      const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Claim the deposit' }).click()]);
      expect(refused.status()).toBe(400);
      await page.locator('#deposit-txHash-err').waitFor();
    } finally {
      await browser.close();
    }
    await expectBooksMatchChain();
  }, 240_000);

  it('credits two Transfer logs of one tx, each (chain, tx, log) once', async () => {
    const { agent, wallet } = await depositor();
    const tx = await (chain.usdc.connect(wallet) as Contract).getFunction('transferTwice')(chain.treasury.address, 1_020_000n, 2_040_000n, { gasLimit: 200_000n });
    const r = await submit(agent, tx.hash);
    const done = await settled(agent, r.body.id, 1);
    expect(done).toMatchObject({ status: 'credited', credits: 300, amountPaid: '3060000' });
    const logs = await app.deps.ds.query(`SELECT log_index FROM deposit_logs WHERE tx_hash = $1 ORDER BY log_index`, [tx.hash.toLowerCase()]);
    expect(logs).toHaveLength(2);
    await expectBooksMatchChain();
  });
});

describe('withdrawals', () => {
  const withdrawalsOf = async (a: TestAgent) => (await app.http.get(`/api/agents/${a.id}/withdrawals`).set('X-Agent-Key', a.key)).body;
  async function finished(a: TestAgent, id: string) {
    return waitFor(`withdrawal ${id}`, async () => {
      await chain.mine(1);
      const w = (await withdrawalsOf(a)).find((x: { id: string }) => x.id === id);
      return ['confirmed', 'failed', 'rejected'].includes(w?.status) ? w : null;
    });
  }
  const usdcOf = async (addr: string) => (await chain.usdc.getFunction('balanceOf')(addr)) as bigint;

  it('sends amount x creditValueUsd to the wallet once confirmed; Idempotency-Key replays; no wallet is 400', async () => {
    const { agent, wallet } = await funded(100);
    const before = await usdcOf(wallet.address);
    const send = () => app.http.post(`/api/agents/${agent.id}/withdraw`).set('X-Agent-Key', agent.key).set('Idempotency-Key', 'w-1').send({ amount: 40 });
    const r = await send();
    expect(r.status).toBe(202);
    expect((await send()).body).toMatchObject({ id: r.body.id, idempotentReplay: true });
    expect(await balance(agent)).toBe(60);
    const done = await finished(agent, r.body.id);
    expect(done).toMatchObject({ status: 'confirmed', tokenAmount: '400000', toAddress: wallet.address });
    expect((await usdcOf(wallet.address)) - before).toBe(400_000n);
    const bare = await registerAgent(app);
    const nw = await app.http.post(`/api/agents/${bare.id}/withdraw`).set('X-Agent-Key', bare.key).send({ amount: 1 });
    expect([nw.status, nw.body.code]).toEqual([400, 'wallet_required']);
    await expectBooksMatchChain();
  });

  it('an assistant\'s withdrawal is asked about with the wallet and the balance after, from its dry run; one that cannot run is not asked (issue 64)', async () => {
    const person = await signUp(app);
    const wallet = await chain.wallet();
    expect((await person.browser.put(`/api/agents/${person.agentId}/wallet`).send({ walletAddress: wallet.address })).status).toBe(200);
    await mint(app, person.agentId, 100);
    // The dry run over REST: where it would go, the token amount, the balance after; nothing moves.
    const dry = await person.browser.post(`/api/agents/${person.agentId}/withdraw`).send({ amount: 40, dryRun: true });
    expect(dry.body).toEqual({ dryRun: true, amount: 40, tokenAmount: '400000', toAddress: wallet.address, review: false, balance: 100, balanceAfter: 60, affordable: true });
    const { client, confirmations } = await connectThroughOAuth(app, person, { redirectUrl: 'http://127.0.0.1:8123/callback' });
    try {
      confirmations.answers.push({ action: 'decline' });
      const declined = await client.callTool({ name: 'withdraw', arguments: { body: { amount: 40 } } });
      expect(declined.isError).toBe(true);
      const question = confirmations.asked.at(-1)!;
      expect(question).toBe(`Test Assistant wants to withdraw 40 credits from your balance to your registered wallet ${wallet.address.slice(0, 6)}…${wallet.address.slice(-4)} (asked because of “money”); your balance after: 60 credits. Go ahead?`);
      const tooMuch = await client.callTool({ name: 'withdraw', arguments: { body: { amount: 1000 } } });
      expect(resultBody(tooMuch)).toMatchObject({ code: 'insufficient_balance' });
      const dust = await client.callTool({ name: 'withdraw', arguments: { body: { amount: 0.0000001 } } });
      expect(resultBody(dust)).toMatchObject({ code: 'validation_failed' });
      expect(confirmations.asked).toHaveLength(1);
      if (process.env.MPPS_MONEY_QUESTIONS) appendFileSync(process.env.MPPS_MONEY_QUESTIONS, `- \`withdraw\`: ${question}\n`);
    } finally {
      await client.close();
    }
    expect((await person.browser.get('/api/agents/me/balance')).body.balance).toBe(100);
    await expectBooksMatchChain();
  });

  it('a transfer that reverts on chain restores the credits exactly once, with the reason', async () => {
    const { agent, wallet } = await funded(100);
    await (await chain.usdc.getFunction('setBlocked')(wallet.address, true)).wait();
    const r = await app.http.post(`/api/agents/${agent.id}/withdraw`).set('X-Agent-Key', agent.key).send({ amount: 25 });
    const done = await finished(agent, r.body.id);
    expect(done.status).toBe('failed');
    expect(done.reason).toMatch(/reverted/);
    expect(await balance(agent)).toBe(100);
    const restores = await app.deps.ds.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'withdrawal_restore' AND ref = $1 AND account_id = $2`, [r.body.id, `agent:${agent.id}`]);
    expect(restores[0].n).toBe(1);
    await expectBooksMatchChain();
  });

  it('above the review threshold waits for the operator: reject restores, approve sends', async () => {
    const { agent } = await funded(12_000);
    const a = await app.http.post(`/api/agents/${agent.id}/withdraw`).set('X-Agent-Key', agent.key).send({ amount: 6000 });
    const b = await app.http.post(`/api/agents/${agent.id}/withdraw`).set('X-Agent-Key', agent.key).send({ amount: 5500 });
    expect([a.body.status, b.body.status]).toEqual(['review', 'review']);
    expect((await app.http.post(`/api/agents/withdrawals/${a.body.id}/approve`).set('X-Agent-Key', agent.key)).status).toBe(403);
    const rej = await app.http.post(`/api/agents/withdrawals/${a.body.id}/reject`).set('X-API-Key', app.masterKey).send({ reason: 'check identity' });
    expect(rej.body).toMatchObject({ status: 'rejected', reason: 'check identity' });
    await app.http.post(`/api/agents/withdrawals/${b.body.id}/approve`).set('X-API-Key', app.masterKey).expect(200);
    expect((await finished(agent, b.body.id)).status).toBe('confirmed');
    expect(await balance(agent)).toBe(6500);
    const t = await app.http.get('/api/agents/treasury').set('X-API-Key', app.masterKey).expect(200);
    expect(t.body).toMatchObject({ address: chain.treasury.address, chainId: 31337 });
    expect(JSON.stringify(t.body)).not.toContain(chain.treasuryKey.slice(2));
    await expectBooksMatchChain();
  });

  it('a job killed right after its broadcast and retried pays once (the retry finds the signed tx, never signs again)', async () => {
    const faulty = await startTestApp({ ...env(), CHAIN_FAULT_AFTER_BROADCAST: 'true' });
    try {
      const { agent, wallet } = await funded(30, faulty);
      const before = await usdcOf(wallet.address);
      const r = await faulty.http.post(`/api/agents/${agent.id}/withdraw`).set('X-Agent-Key', agent.key).send({ amount: 30 });
      const done = await waitFor('the faulted withdrawal', async () => {
        await chain.mine(1);
        const w = (await faulty.http.get(`/api/agents/${agent.id}/withdrawals`).set('X-Agent-Key', agent.key)).body[0];
        return w.status === 'confirmed' ? w : null;
      });
      expect(done.id).toBe(r.body.id);
      const job = await faulty.deps.hub.queue(faulty.deps.hub.queueFor('chain')).getJob(`withdrawal-${r.body.id}-0`);
      expect(job?.attemptsMade).toBeGreaterThanOrEqual(2); // the first attempt died after broadcasting
      const logs = await chain.usdc.queryFilter(chain.usdc.filters.Transfer(chain.treasury.address, wallet.address));
      expect(logs).toHaveLength(1);
      expect((await usdcOf(wallet.address)) - before).toBe(300_000n);
      await expectBooksMatchChain();
    } finally {
      await faulty.close();
    }
  });
});

describe('lost jobs', () => {
  /** Remove every job of the chain queue (as a Redis restart would), until none is waiting, delayed or running. */
  async function loseEveryJob(a: TestApp): Promise<void> {
    const q = a.deps.hub.queue(a.deps.hub.queueFor('chain'));
    await waitFor('an empty chain queue', async () => {
      await q.drain(true);
      const counts = await q.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
      return Object.values(counts).every((n) => n === 0);
    });
  }

  it('the watchdog gives a pending deposit and a signed withdrawal whose jobs were lost a live job again; each settles once', async () => {
    // A second app whose watchdog sweeps often (the suite's app sweeps only at start).
    const swept = await startTestApp({ ...env(), WATCHDOG_INTERVAL_MS: '200' });
    try {
      const { agent, wallet } = await funded(50, swept);
      const get = async (path: string) => (await swept.http.get(`/api/agents/${agent.id}/${path}`).set('X-Agent-Key', agent.key)).body;

      // A deposit one block deep (3 needed) and a withdrawal broadcast but short of its confirmations: both wait on their jobs.
      const before = await chain.usdc.getFunction('balanceOf')(wallet.address);
      const hash = await pay(wallet, 2_040_000n); // 204 gross -> 200 issued, 4 fee
      const dep = (await swept.http.post(`/api/agents/${agent.id}/deposit`).set('X-Agent-Key', agent.key).send({ txHash: hash }).expect(202)).body;
      const wd = (await swept.http.post(`/api/agents/${agent.id}/withdraw`).set('X-Agent-Key', agent.key).send({ amount: 20 }).expect(202)).body;
      await waitFor('the deposit re-checked and the withdrawal signed', async () => (await get(`deposits/${dep.id}`)).checks >= 2 && (await get('withdrawals'))[0].status === 'signed');

      await loseEveryJob(swept);
      expect((await get(`deposits/${dep.id}`)).status).toBe('pending');
      await chain.mine(CONFIRMATIONS);

      const done = await waitFor('the deposit credited by a recovered job', async () => {
        const d = await get(`deposits/${dep.id}`);
        return d.status === 'credited' ? d : null;
      });
      expect(done).toMatchObject({ credits: 200, fee: 4 });
      const w = await waitFor('the withdrawal confirmed by a recovered job', async () => {
        const x = (await get('withdrawals'))[0];
        return x.status === 'confirmed' ? x : null;
      });
      expect(w.id).toBe(wd.id);
      // One signature, one transfer: the recovered job found the signed tx and never signed again.
      const logs = await chain.usdc.queryFilter(chain.usdc.filters.Transfer(chain.treasury.address, wallet.address));
      expect(logs).toHaveLength(1);
      expect((await chain.usdc.getFunction('balanceOf')(wallet.address)) - before).toBe(200_000n - 2_040_000n);
      expect((await swept.http.get(`/api/agents/${agent.id}/balance`).set('X-Agent-Key', agent.key)).body.balance).toBe(230);
      await expectBooksMatchChain();
    } finally {
      await swept.close();
    }
  });
});

describe('re-organisation', () => {
  it('a credited deposit whose block leaves the chain before finality is flagged, its credits kept once; the same tx mined again is 409', async () => {
    const { agent, wallet } = await depositor();
    const snapshot: string = await chain.provider.send('evm_snapshot', []);
    // Signed by hand so the very same transaction can be sent again after the re-organisation.
    const raw = await wallet.signTransaction(
      await wallet.populateTransaction({ to: chain.usdc.target as string, data: chain.usdc.interface.encodeFunctionData('transfer', [chain.treasury.address, 3_060_000n]), gasLimit: 100_000n }),
    );
    const hash = (await chain.provider.broadcastTransaction(raw)).hash;
    const r = await submit(agent, hash);
    await chain.mine(CONFIRMATIONS - 1); // deep enough to credit (3), short of finality (6)
    const credited = await settled(agent, r.body.id);
    expect(credited).toMatchObject({ status: 'credited', credits: 300, fee: 6 });

    // The block with the deposit is replaced: back to before it, then other blocks at its height.
    expect(await chain.provider.send('evm_revert', [snapshot])).toBe(true);
    await chain.mine(CONFIRMATIONS + 1);
    expect(await chain.provider.getTransactionReceipt(hash)).toBeNull();
    const flagged = await waitFor('the deposit flagged', async () => {
      const d = (await app.http.get(`/api/agents/${agent.id}/deposits/${r.body.id}`).set('X-Agent-Key', agent.key)).body;
      return d.status === 'flagged' ? d : null;
    });
    expect(flagged.reason).toMatch(/no longer on the chain/);
    expect(flagged.blockHash).toBe(credited.blockHash);
    expect(await balance(agent)).toBe(300); // not reversed: the operator reviews it
    await expectLedgerSound(app.deps);

    // The same tx mined again in a new block is still that deposit: 409, nothing credited twice.
    await chain.provider.broadcastTransaction(raw);
    await chain.mine(CONFIRMATIONS);
    const again = await submit(agent, hash);
    expect(again.status).toBe(409);
    expect(again.body.deposit).toMatchObject({ id: r.body.id, status: 'flagged' });
    expect(await balance(agent)).toBe(300);
    const credits = await app.deps.ds.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'deposit' AND ref = $1 AND account_id = $2`, [r.body.id, `agent:${agent.id}`]);
    expect(credits[0].n).toBe(1);
    await expectBooksMatchChain();
  });
});
