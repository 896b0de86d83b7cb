import { Contract, Interface, JsonRpcProvider, Transaction, Wallet, getAddress, type TransactionReceipt } from 'ethers';
import type { Config } from '../config';
import { feeBasisPoints, unitsPerCredit } from '../domain/credits';

/**
 * ethers 6 wrappers for the chain side of credits: one JSON-RPC provider per URL, the USDC contract,
 * Transfer log decoding and the treasury signer. The treasury key stays in this module's closure: it
 * is never logged, stored or returned (only its address is).
 */
export const ERC20 = new Interface([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
]);
const TRANSFER_TOPIC = ERC20.getEvent('Transfer')!.topicHash;
/** Gas for one ERC-20 transfer, fixed so the signed transaction never depends on an estimate. */
const TRANSFER_GAS = 100_000n;

export interface ChainSettings {
  chainId: number;
  token: string;
  decimals: number;
  treasury: string;
  confirmations: number;
  finality: number;
  unitsPerCredit: bigint;
  feeBps: bigint;
  creditValueUsd: number;
  buyFeePercent: number;
}

export interface TokenTransfer {
  logIndex: number;
  from: string;
  to: string;
  value: bigint;
}

export interface ReceiptView {
  status: number;
  blockNumber: number;
  blockHash: string;
  confirmations: number;
  /** Transfer logs of the configured token only. */
  transfers: TokenTransfer[];
}

export interface Chain {
  settings: ChainSettings;
  receipt(txHash: string): Promise<ReceiptView | null>;
  blockHash(blockNumber: number): Promise<string | null>;
  head(): Promise<number>;
  tokenBalance(address: string): Promise<bigint>;
  gasBalance(address: string): Promise<bigint>;
  /** The treasury's next nonce as the node sees it (pending included). */
  pendingNonce(): Promise<number>;
  /** Sign (never send) a token transfer from the treasury. */
  signTransfer(to: string, units: bigint, nonce: number): Promise<{ hash: string; raw: string }>;
  /**
   * Send a signed transaction: 'known' when the node already has it or its nonce is used, a
   * rejection the node will never accept (gas short) as { rejected }; anything else throws (retry).
   */
  broadcast(raw: string): Promise<'sent' | 'known' | { rejected: string }>;
  /** Whether the node knows this transaction (pending or mined). */
  knows(txHash: string): Promise<boolean>;
  close(): void;
}

const chains = new Map<string, Chain>();

/** The chain of this configuration, or null when no chain is configured. */
export function chainOf(config: Config): Chain | null {
  const { CHAIN_RPC_URL: url, CHAIN_ID: chainId, USDC_ADDRESS: token, TREASURY_PRIVATE_KEY: key } = config;
  if (!url || !chainId || !token || !key) return null;
  const cacheKey = `${url}|${chainId}|${token}|${config.CONFIRMATIONS}|${config.FINALITY_CONFIRMATIONS}|${config.CREDIT_VALUE_USD}|${config.BUY_FEE_PERCENT}|${new Wallet(key).address}`;
  let c = chains.get(cacheKey);
  if (!c) {
    c = makeChain(config, url, chainId, getAddress(token), key);
    chains.set(cacheKey, c);
  }
  return c;
}

/** Drop every provider (tests and shutdown). */
export function closeChains(): void {
  for (const c of chains.values()) c.close();
  chains.clear();
}

function makeChain(config: Config, url: string, chainId: number, token: string, key: string): Chain {
  const provider = new JsonRpcProvider(url, chainId, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  const signer = new Wallet(key, provider);
  const usdc = new Contract(token, ERC20, provider);
  const settings: ChainSettings = {
    chainId,
    token,
    decimals: config.USDC_DECIMALS,
    treasury: signer.address,
    confirmations: config.CONFIRMATIONS,
    finality: Math.max(config.FINALITY_CONFIRMATIONS, config.CONFIRMATIONS),
    unitsPerCredit: unitsPerCredit(config.CREDIT_VALUE_USD, config.USDC_DECIMALS),
    feeBps: feeBasisPoints(config.BUY_FEE_PERCENT),
    creditValueUsd: config.CREDIT_VALUE_USD,
    buyFeePercent: config.BUY_FEE_PERCENT,
  };
  const decode = (r: TransactionReceipt): TokenTransfer[] =>
    r.logs
      .filter((l) => getAddress(l.address) === token && l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3)
      .map((l) => {
        const ev = ERC20.parseLog({ topics: [...l.topics], data: l.data })!;
        return { logIndex: l.index, from: getAddress(ev.args[0] as string), to: getAddress(ev.args[1] as string), value: ev.args[2] as bigint };
      });
  return {
    settings,
    async receipt(txHash) {
      const r = await provider.getTransactionReceipt(txHash);
      if (!r) return null;
      // confirmations() is async in ethers 6 (it reads the head).
      return { status: r.status ?? 0, blockNumber: r.blockNumber, blockHash: r.blockHash, confirmations: await r.confirmations(), transfers: decode(r) };
    },
    async blockHash(n) {
      const b = await provider.getBlock(n);
      return b?.hash ?? null;
    },
    head: () => provider.getBlockNumber(),
    tokenBalance: async (address) => (await usdc.balanceOf(address)) as bigint,
    gasBalance: (address) => provider.getBalance(address),
    pendingNonce: () => provider.getTransactionCount(signer.address, 'pending'),
    async signTransfer(to, units, nonce) {
      const fee = await provider.getFeeData();
      const maxPriority = fee.maxPriorityFeePerGas ?? 1_000_000_000n;
      const maxFee = fee.maxFeePerGas ?? (fee.gasPrice ?? 1_000_000_000n) * 2n;
      const raw = await signer.signTransaction({
        type: 2,
        chainId,
        nonce,
        to: token,
        data: ERC20.encodeFunctionData('transfer', [to, units]),
        gasLimit: TRANSFER_GAS,
        maxFeePerGas: maxFee,
        maxPriorityFeePerGas: maxPriority,
        value: 0n,
      });
      return { hash: Transaction.from(raw).hash!, raw };
    },
    async broadcast(raw) {
      try {
        await provider.broadcastTransaction(raw);
        return 'sent';
      } catch (err) {
        const e = err as { shortMessage?: string; message?: string; code?: string };
        const text = `${e.code ?? ''} ${e.shortMessage ?? e.message ?? String(err)}`;
        if (/already known|known transaction|already imported|nonce too low|nonce has already been used|NONCE_EXPIRED/i.test(text)) return 'known';
        if (/insufficient funds|INSUFFICIENT_FUNDS/i.test(text)) return { rejected: 'The treasury cannot pay the gas for this transfer.' };
        throw err;
      }
    },
    knows: async (txHash) => (await provider.getTransaction(txHash)) !== null,
    close: () => provider.destroy(),
  };
}
