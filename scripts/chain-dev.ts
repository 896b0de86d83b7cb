/**
 * npm run chain:dev [-- --port 8545 --block-ms 1000 --env-out .data/chain-dev.env]
 *
 * A local chain for an operator trying deposits and withdrawals: Hardhat Network on 127.0.0.1:<port>
 * (scripts/chain/local.ts, the chain tests' node), MockUSDC deployed, a block every --block-ms (so
 * confirmations arrive by themselves; transactions are still mined at once), the treasury funded
 * with ETH for gas and 10,000 USDC for withdrawals, and a depositor wallet (new each run) with
 * 100 ETH and 10,000 USDC. Prints the configuration lines for the service and the depositor's key,
 * writes them to --env-out too (read by npm run chain:send), and runs until Ctrl-C. Its state is
 * in memory: a restart is a new chain.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { HDNodeWallet, Wallet } from 'ethers';
import { LOCAL_CHAIN_ID, mintUsdc, startLocalChain } from './chain/local';

// Hardhat's well-known development accounts #0 and #1 (its default mnemonic, funded by Hardhat Network
// itself): on a fresh chain the deployer's first transaction always creates the token at the same
// address, so the lines below stay valid across restarts. Never use these keys on a real chain.
const HARDHAT_MNEMONIC = 'test test test test test test test test test test test junk';
const hardhatAccount = (i: number) => HDNodeWallet.fromPhrase(HARDHAT_MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`);
const DEPLOYER_KEY = hardhatAccount(0).privateKey;
const TREASURY_KEY = hardhatAccount(1).privateKey;
const USDC = 1_000_000n; // token units of one USDC (6 decimals)

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value.`);
  return v;
}

async function main(): Promise<void> {
  const port = Number(arg('port', '8545'));
  const blockMs = Number(arg('block-ms', '1000'));
  const envFile = resolve(arg('env-out', '.data/chain-dev.env'));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, not ${arg('port', '')}.`);
  if (!Number.isInteger(blockMs) || blockMs < 100) throw new Error(`--block-ms must be a whole number of milliseconds, at least 100.`);

  const node = await startLocalChain({ port });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await node.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  try {
    const deployer = new Wallet(DEPLOYER_KEY, node.provider);
    const treasury = new Wallet(TREASURY_KEY, node.provider);
    const depositor = Wallet.createRandom();
    const usdc = await node.deployUsdc(deployer);
    await mintUsdc(usdc, treasury.address, 10_000n * USDC);
    await node.setEth(depositor.address, '100');
    await mintUsdc(usdc, depositor.address, 10_000n * USDC);
    await node.provider.send('evm_setIntervalMining', [blockMs]);

    const lines = [
      '# the service (npm start): a local chain',
      `CHAIN_RPC_URL=${node.url}`,
      `CHAIN_ID=${LOCAL_CHAIN_ID}`,
      `USDC_ADDRESS=${await usdc.getAddress()}`,
      'USDC_DECIMALS=6',
      `TREASURY_PRIVATE_KEY=${TREASURY_KEY}`,
      `# a block every ${blockMs} ms: few confirmations keep the wait short`,
      'CONFIRMATIONS=2',
      'FINALITY_CONFIRMATIONS=6',
      'CHAIN_RECHECK_MS=500',
      'CHAIN_RECHECK_MAX_MS=2000',
      '# the depositor (npm run chain:send): 100 ETH and 10,000 USDC; register this address as your wallet',
      `DEPOSITOR_ADDRESS=${depositor.address}`,
      `DEPOSITOR_PRIVATE_KEY=${depositor.privateKey}`,
    ];
    mkdirSync(dirname(envFile), { recursive: true });
    writeFileSync(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });
    process.stdout.write(
      [
        `Local chain: Hardhat Network at ${node.url} (chain ${LOCAL_CHAIN_ID}), MockUSDC deployed, a block every ${blockMs} ms.`,
        `Treasury ${treasury.address}: 10,000 ETH, 10,000 USDC.`,
        '',
        ...lines,
        '',
        `Written to ${envFile}; start the service with them:  set -a; . ${envFile}; set +a; npm start`,
        'Ctrl-C stops the chain (its state is in memory and goes with it).',
        '',
      ].join('\n'),
    );
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    await stop(1);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
