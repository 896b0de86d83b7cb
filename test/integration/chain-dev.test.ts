import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Contract, JsonRpcProvider, Wallet } from 'ethers';
import { loadConfig } from '../../src/config';

/**
 * `npm run chain:dev` as an operator runs it (scripts/chain-dev.ts in a child process): it prints the
 * service's chain lines and the depositor's, writes them to its env file, the token answers at the
 * printed address with the promised balances, blocks come by themselves, `npm run chain:send` pays
 * the treasury, and Ctrl-C (SIGINT) stops the node.
 */
const ROOT = path.join(__dirname, '..', '..');
const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
const answers = (port: number) =>
  new Promise<boolean>((res) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    sock.once('connect', () => (sock.destroy(), res(true)));
    sock.once('error', () => res(false));
  });

it('starts a chain with USDC deployed and funded, prints the env lines, mines by itself and stops on Ctrl-C', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mpps-chain-dev-'));
  const envFile = path.join(dir, 'chain.env');
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/chain-dev.ts', '--port', String(port), '--block-ms', '200', '--env-out', envFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let provider: JsonRpcProvider | undefined;
  try {
    for (const until = Date.now() + 30_000; !out.includes('Ctrl-C stops the chain'); await new Promise((r) => setTimeout(r, 50))) {
      if (child.exitCode !== null || Date.now() > until) throw new Error(`chain:dev did not come up; it printed:\n${out}${err}`);
    }
    const printed = Object.fromEntries([...out.matchAll(/^([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    expect(Object.keys(printed)).toEqual(expect.arrayContaining(['CHAIN_RPC_URL', 'CHAIN_ID', 'USDC_ADDRESS', 'TREASURY_PRIVATE_KEY', 'CONFIRMATIONS', 'DEPOSITOR_ADDRESS', 'DEPOSITOR_PRIVATE_KEY']));
    expect(printed.CHAIN_RPC_URL).toBe(`http://127.0.0.1:${port}`);
    for (const [k, v] of Object.entries(printed)) expect(readFileSync(envFile, 'utf8')).toContain(`\n${k}=${v}\n`);
    // The service takes the lines as they are.
    const cfg = loadConfig({ ...printed });
    expect([cfg.CHAIN_RPC_URL, cfg.CHAIN_ID, cfg.USDC_ADDRESS, cfg.CONFIRMATIONS]).toEqual([printed.CHAIN_RPC_URL, 31337, printed.USDC_ADDRESS, 2]);

    provider = new JsonRpcProvider(printed.CHAIN_RPC_URL, 31337, { staticNetwork: true });
    const usdc = new Contract(printed.USDC_ADDRESS, ['function symbol() view returns (string)', 'function decimals() view returns (uint8)', 'function balanceOf(address) view returns (uint256)'], provider);
    const treasury = new Wallet(printed.TREASURY_PRIVATE_KEY).address;
    expect(new Wallet(printed.DEPOSITOR_PRIVATE_KEY).address).toBe(printed.DEPOSITOR_ADDRESS);
    expect([await usdc.symbol(), Number(await usdc.decimals())]).toEqual(['USDC', 6]);
    expect(await usdc.balanceOf(printed.DEPOSITOR_ADDRESS)).toBe(10_000_000_000n);
    expect(await usdc.balanceOf(treasury)).toBe(10_000_000_000n);
    expect(await provider.getBalance(printed.DEPOSITOR_ADDRESS)).toBeGreaterThan(0n);

    // Interval mining: blocks arrive with no transaction sent.
    const before = await provider.getBlockNumber();
    await new Promise((r) => setTimeout(r, 700));
    expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(before + 2);

    const sent = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/chain-send.ts', '1.5', '--env', envFile], { cwd: ROOT });
    const txHash = /^txHash (0x[0-9a-f]{64})$/m.exec(sent.stdout)?.[1];
    expect(txHash).toBeDefined();
    expect((await provider.getTransactionReceipt(txHash!))?.status).toBe(1);
    expect(await usdc.balanceOf(treasury)).toBe(10_001_500_000n);
  } finally {
    provider?.destroy();
    child.kill('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  }
  expect(await exited).toBe(0);
  expect(await answers(port)).toBe(false);
});
