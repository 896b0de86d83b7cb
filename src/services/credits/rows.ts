import type { Row } from '../../db/rows';
import type { AgentWallet, CreditTransfer, Deposit, Withdrawal } from '../../entities/credits';

/** Credit rows as the API shows them (what presenters read): their entities' columns (db/rows), less what stays inside. Amounts in nano credits. */

export type TransferRow = Row<CreditTransfer>;

/** address: checksummed. */
export type WalletRow = Row<AgentWallet>;

/** amountUnits: token units paid. */
export type DepositRow = Omit<Row<Deposit>, 'checkedAt'>;

/** units: token units sent; the signer, raw transaction and reviewer stay inside. */
export type WithdrawalRow = Omit<Row<Withdrawal>, 'signer' | 'rawTx' | 'decidedBy' | 'checks' | 'checkedAt'>;
