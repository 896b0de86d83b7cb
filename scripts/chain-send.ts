/**
 * npm run chain:send -- <amount in USDC> [--env .data/chain-dev.env] [--to 0x…]
 *
 * Sends USDC on the chain of `npm run chain:dev` from its depositor to the treasury (or --to) and
 * prints the transaction hash to POST to /agents/{id}/deposit. Reads the lines chain:dev wrote.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Contract, JsonRpcProvider, Wallet, getAddress, parseUnits } from 'ethers';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const amount = process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (!amount || !/^\d+(\.\d{1,6})?$/.test(amount)) throw new Error('Give the amount in USDC (at most 6 decimals): npm run chain:send -- 10');
  const envFile = resolve(arg('env') ?? '.data/chain-dev.env');
  if (!existsSync(envFile)) throw new Error(`${envFile} is missing: start the chain first with npm run chain:dev.`);
  const env = Object.fromEntries(
    readFileSync(envFile, 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const provider = new JsonRpcProvider(env.CHAIN_RPC_URL, Number(env.CHAIN_ID), { staticNetwork: true });
  try {
    const from = new Wallet(env.DEPOSITOR_PRIVATE_KEY, provider);
    const to = getAddress(arg('to') ?? new Wallet(env.TREASURY_PRIVATE_KEY).address);
    const usdc = new Contract(env.USDC_ADDRESS, ['function transfer(address to, uint256 value) returns (bool)'], from);
    const units = parseUnits(amount, Number(env.USDC_DECIMALS ?? 6));
    const tx = (await usdc.getFunction('transfer')(to, units)) as { hash: string; wait(): Promise<{ blockNumber: number } | null> };
    const receipt = await tx.wait();
    process.stdout.write(`sent ${amount} USDC from ${from.address} to ${to} in block ${receipt?.blockNumber}\ntxHash ${tx.hash}\n`);
  } catch (err) {
    const msg = (err as Error).message;
    if (/ECONNREFUSED|failed to detect network/i.test(msg)) throw new Error(`No chain answers at ${env.CHAIN_RPC_URL}: is npm run chain:dev still running?`);
    throw err;
  } finally {
    provider.destroy();
  }
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
