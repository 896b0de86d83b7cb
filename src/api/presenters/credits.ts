import { formatUnits } from 'ethers';
import { toCredits } from '../../domain/money';
import type { CreditRecord, SignupGrant, SpendRecord, Statement, TransferQuote, TransferRecord, WithdrawalQuote, depositAddress, treasuryStatus } from '../../services/credits';
import type { DepositRow, TransferRow, WalletRow, WithdrawalRow } from '../../services/credits';

const replayFlag = (replay: boolean) => (replay ? { idempotentReplay: true as const } : {});
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const credits = (n: bigint | null) => (n === null ? null : toCredits(n));

/** The sign-up grant as the caller sees it; after paying it, with the balance. */
export function presentSignupGrant(g: SignupGrant & { balance?: bigint }, replay = false) {
  return { credits: toCredits(g.amount), available: g.available, paidAt: iso(g.paidAt), ...(g.balance !== undefined ? { balance: toCredits(g.balance) } : {}), ...replayFlag(replay) };
}

/** Spec §2.12 transfer row. */
export function presentTransfer(t: TransferRow) {
  return { id: t.id, fromAgent: t.fromAgent, toAgent: t.toAgent, amount: toCredits(t.amount), memo: t.memo, createdAt: t.createdAt.toISOString() };
}

export function presentTransferQuote(q: TransferQuote) {
  return { dryRun: true as const, toAgent: q.toAgent, toNickname: q.toNickname, amount: toCredits(q.amount), balance: toCredits(q.balance), balanceAfter: toCredits(q.balance - q.amount), affordable: q.affordable };
}

export function presentWithdrawalQuote(q: WithdrawalQuote) {
  return { dryRun: true as const, amount: toCredits(q.amount), tokenAmount: q.units.toString(), toAddress: q.toAddress, review: q.review, balance: toCredits(q.balance), balanceAfter: toCredits(q.balance - q.amount), affordable: q.affordable };
}

export function presentTransferResult(t: TransferRecord, replay: boolean) {
  return { ...presentTransfer(t), balance: toCredits(t.balance), ...replayFlag(replay) };
}

export function presentSpend(s: SpendRecord, replay: boolean) {
  return { id: s.id, agentId: s.agentId, amount: toCredits(s.amount), type: s.type, reason: s.reason, balance: toCredits(s.balance), createdAt: s.createdAt.toISOString(), ...replayFlag(replay) };
}

export function presentCredit(c: CreditRecord, replay: boolean) {
  return { ok: true as const, agentId: c.agentId, amount: toCredits(c.amount), balance: toCredits(c.balance), issued: c.issued, ...replayFlag(replay) };
}

export function presentWallet(w: WalletRow) {
  return { agentId: w.agentId, walletAddress: w.address, updatedAt: w.updatedAt.toISOString() };
}

export function presentDeposit(d: DepositRow) {
  return {
    id: d.id,
    agentId: d.agentId,
    chainId: Number(d.chainId),
    txHash: d.txHash,
    status: d.status,
    reason: d.reason,
    fromAddress: d.fromAddress,
    amountPaid: d.amountUnits === null ? null : d.amountUnits.toString(),
    credits: credits(d.credits),
    fee: credits(d.fee),
    blockNumber: d.blockNumber === null ? null : Number(d.blockNumber),
    blockHash: d.blockHash,
    checks: d.checks,
    final: d.final,
    createdAt: d.createdAt.toISOString(),
    updatedAt: iso(d.updatedAt),
  };
}

export function presentWithdrawal(w: WithdrawalRow, replay = false) {
  return {
    id: w.id,
    agentId: w.agentId,
    amount: toCredits(w.amount),
    tokenAmount: w.units.toString(),
    toAddress: w.toAddress,
    status: w.status,
    reason: w.reason,
    txHash: w.txHash,
    nonce: w.nonce,
    blockNumber: w.blockNumber === null ? null : Number(w.blockNumber),
    createdAt: w.createdAt.toISOString(),
    updatedAt: iso(w.updatedAt),
    ...replayFlag(replay),
  };
}

export function presentDepositAddress(a: ReturnType<typeof depositAddress>) {
  return {
    address: a.address,
    chainId: a.chainId,
    asset: a.asset,
    contract: a.contract,
    decimals: a.decimals,
    confirmations: a.confirmations,
    creditValueUsd: a.creditValueUsd,
    buyFeePercent: a.buyFeePercent,
  };
}

export function presentTreasury(t: Awaited<ReturnType<typeof treasuryStatus>>) {
  return {
    address: t.address,
    chainId: t.chainId,
    contract: t.contract,
    tokenBalance: formatUnits(t.tokenUnits, t.decimals),
    gasBalance: formatUnits(t.gasWei, 18),
    /** The token balance in credits, for comparing with what is owed. */
    balance: toCredits((t.tokenUnits * 1_000_000_000n) / t.unitsPerCredit),
    creditsOutstanding: toCredits(t.creditsOutstanding),
    withdrawalsPending: toCredits(t.withdrawalsPending),
    units: { tokenBalance: 'USDC', gasBalance: 'ETH', balance: 'credits', creditsOutstanding: 'credits', withdrawalsPending: 'credits' } as const,
  };
}

/** The ledger statement: nano amounts and balances become credits here, from bigint. */
export function presentStatement(s: Statement) {
  return {
    agentId: s.agentId,
    balance: toCredits(s.balance),
    entries: s.legs.map((l) => ({
      id: l.id,
      kind: l.kind,
      ledgerKind: l.ledgerKind,
      amount: toCredits(l.amount),
      balanceAfter: toCredits(l.balanceAfter),
      createdAt: l.createdAt.toISOString(),
      memo: l.memo,
      ledgerTransferId: l.ledgerTransferId,
      cause: l.cause,
    })),
    nextCursor: s.nextCursor,
  };
}
