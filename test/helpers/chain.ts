import { Wallet, type Contract, type JsonRpcProvider } from 'ethers';
import { mintUsdc, startLocalChain } from '../../scripts/chain/local';

/**
 * A real Ethereum node for the chain tests: Hardhat Network (automine) in a child process, with
 * MockUSDC (6 decimals) compiled by solc and deployed (scripts/chain/local.ts, shared with
 * `npm run chain:dev`). Extra blocks are mined explicitly.
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
  const node = await startLocalChain();
  try {
    const rpc = node.provider;
    const deployer = new Wallet(Wallet.createRandom().privateKey, rpc);
    await node.setEth(deployer.address, '100');
    const usdc = await node.deployUsdc(deployer);
    const otherToken = await node.deployUsdc(deployer);
    const treasury = new Wallet(Wallet.createRandom().privateKey, rpc);
    await node.setEth(treasury.address, '100');
    return {
      url: node.url,
      chainId: node.chainId,
      provider: rpc,
      usdc,
      otherToken,
      treasury,
      treasuryKey: treasury.privateKey,
      async wallet() {
        const w = new Wallet(Wallet.createRandom().privateKey, rpc);
        await node.setEth(w.address, '100');
        await mintUsdc(usdc, w.address, 1_000_000_000_000n);
        await mintUsdc(otherToken, w.address, 1_000_000_000_000n);
        return w;
      },
      mine: async (blocks) => {
        await rpc.send('hardhat_mine', ['0x' + blocks.toString(16)]);
      },
      stop: () => node.stop(),
    };
  } catch (err) {
    // A failed deploy must not leave the node running.
    await node.stop();
    throw err;
  }
}
