import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Contract, ContractFactory, JsonRpcProvider, parseEther, type InterfaceAbi, type Signer } from 'ethers';

/**
 * A local Ethereum node (Hardhat Network, automine, in a child process) and MockUSDC (6 decimals,
 * compiled by solc): the chain tests (test/helpers/chain.ts) and `npm run chain:dev` both start it here.
 */
export const LOCAL_CHAIN_ID = 31337;

export interface LocalChainNode {
  url: string;
  chainId: number;
  provider: JsonRpcProvider;
  /** Give `address` this much ETH (hardhat_setBalance). */
  setEth(address: string, ether: string): Promise<void>;
  /** Deploy a fresh MockUSDC from `deployer`. */
  deployUsdc(deployer: Signer): Promise<Contract>;
  stop(): Promise<void>;
}

type Mint = (to: string, units: bigint) => Promise<{ wait(): Promise<unknown> }>;

/** Mint `units` (token units: 6 decimals) of a MockUSDC to `to` and wait for the block. */
export async function mintUsdc(token: Contract, to: string, units: bigint): Promise<void> {
  await (await (token.mint as Mint)(to, units)).wait();
}

export async function startLocalChain(opts: { port?: number } = {}): Promise<LocalChainNode> {
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'node.cjs')], {
    env: { ...process.env, CHAIN_NODE_PORT: String(opts.port ?? 0) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The node must never outlive this process (its pipes would keep Jest from exiting).
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const stopChild = async () => {
    process.off('exit', killChild);
    if (exited()) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill();
    await gone;
  };
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const rl = createInterface({ input: child.stdout! });
  let provider: JsonRpcProvider | undefined;
  try {
    const first = await new Promise<string>((resolve, reject) => {
      rl.once('line', (l) => resolve(l));
      child.once('exit', (code) => {
        if (/EADDRINUSE/.test(stderr)) reject(new Error(`Port ${opts.port} is in use: stop what holds it or choose another with --port.`));
        else reject(new Error(`The chain node exited (${code}): ${stderr.trim()}`));
      });
    });
    rl.close();
    const { url, abi, bytecode } = JSON.parse(first) as { url: string; abi: InterfaceAbi; bytecode: string };
    const rpc = new JsonRpcProvider(url, LOCAL_CHAIN_ID, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
    provider = rpc;
    return {
      url,
      chainId: LOCAL_CHAIN_ID,
      provider: rpc,
      setEth: async (address, ether) => {
        await rpc.send('hardhat_setBalance', [address, '0x' + parseEther(ether).toString(16)]);
      },
      deployUsdc: async (deployer) => {
        const c = await new ContractFactory(abi, bytecode, deployer).deploy();
        await c.waitForDeployment();
        return new Contract(await c.getAddress(), abi, deployer);
      },
      stop: async () => {
        rpc.destroy();
        await stopChild();
      },
    };
  } catch (err) {
    // A failed start must not leave the node running.
    rl.close();
    provider?.destroy();
    await stopChild();
    throw err;
  }
}
