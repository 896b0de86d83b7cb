import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Contract, ContractFactory, JsonRpcProvider, Wallet, parseEther, type InterfaceAbi } from 'ethers';

/**
 * A real Ethereum node for the chain tests: Hardhat Network (automine) in a child process, with
 * MockUSDC (6 decimals) compiled by solc and deployed. Extra blocks are mined explicitly.
 */
export interface TestChain {
  url: string;
  chainId: number;
  provider: JsonRpcProvider;
  usdc: Contract;
  /** Another token with the same Transfer event (a deposit of the wrong token). */
  otherToken: Contract;
  treasury: Wallet;
  treasuryKey: string;
  /** A funded wallet (gas and 1,000,000 USDC). */
  wallet(): Promise<Wallet>;
  mine(blocks: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startChain(): Promise<TestChain> {
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, '../fixtures/chainNode.cjs')], { stdio: ['ignore', 'pipe', 'pipe'] });
  // The node must never outlive the test process (its pipes would keep Jest from exiting).
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
      child.once('exit', (code) => reject(new Error(`chain node exited (${code}): ${stderr}`)));
    });
    rl.close();
    const { url, abi, bytecode } = JSON.parse(first) as { url: string; abi: InterfaceAbi; bytecode: string };
    const rpc = new JsonRpcProvider(url, 31337, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
    provider = rpc;
    const fund = async (address: string) => rpc.send('hardhat_setBalance', [address, '0x' + parseEther('100').toString(16)]);
    const deployer = Wallet.createRandom(rpc);
    await fund(deployer.address);
    const deploy = async () => {
      const c = await new ContractFactory(abi, bytecode, deployer).deploy();
      await c.waitForDeployment();
      return new Contract(await c.getAddress(), abi, deployer);
    };
    const usdc = await deploy();
    const otherToken = await deploy();
    const treasury = Wallet.createRandom(rpc);
    await fund(treasury.address);
    return {
      url,
      chainId: 31337,
      provider: rpc,
      usdc,
      otherToken,
      treasury: new Wallet(treasury.privateKey, rpc),
      treasuryKey: treasury.privateKey,
      async wallet() {
        const w = new Wallet(Wallet.createRandom().privateKey, rpc);
        await fund(w.address);
        await (await (usdc.mint as (to: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(w.address, 1_000_000_000_000n)).wait();
        await (await (otherToken.mint as (to: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(w.address, 1_000_000_000_000n)).wait();
        return w;
      },
      mine: async (blocks) => {
        await rpc.send('hardhat_mine', ['0x' + blocks.toString(16)]);
      },
      stop: async () => {
        rpc.destroy();
        await stopChild();
      },
    };
  } catch (err) {
    // A failed start (compile, deploy) must not leave the node running.
    rl.close();
    provider?.destroy();
    await stopChild();
    throw err;
  }
}
