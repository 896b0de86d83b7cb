/** Credit rows as the API shows them (what presenters read): plain rows, not the TypeORM entities. Amounts in nano credits. */

export interface TransferRow {
  id: string;
  fromAgent: string;
  toAgent: string;
  amount: bigint;
  memo: string | null;
  createdAt: Date;
}

export interface WalletRow {
  agentId: string;
  /** Checksummed. */
  address: string;
  updatedAt: Date;
}

export interface DepositRow {
  id: string;
  agentId: string;
  chainId: bigint;
  txHash: string;
  status: 'pending' | 'credited' | 'rejected' | 'flagged';
  reason: string | null;
  fromAddress: string | null;
  /** Token units paid. */
  amountUnits: bigint | null;
  credits: bigint | null;
  fee: bigint | null;
  blockNumber: bigint | null;
  blockHash: string | null;
  checks: number;
  final: boolean;
  createdAt: Date;
  updatedAt: Date | null;
}

export interface WithdrawalRow {
  id: string;
  agentId: string;
  amount: bigint;
  /** Token units sent. */
  units: bigint;
  toAddress: string;
  status: 'review' | 'queued' | 'signed' | 'confirmed' | 'failed' | 'rejected';
  reason: string | null;
  txHash: string | null;
  nonce: number | null;
  blockNumber: bigint | null;
  createdAt: Date;
  updatedAt: Date | null;
}
