import type { Row } from '../../db/rows';
import type { Hook, HookDelivery } from '../../entities/hooks';

/** A webhook endpoint as the API shows it (what presenters read): its entity's columns (db/rows) without the secrets and the delivery lease. */
export type HookRow = Omit<Row<Hook>, 'secret' | 'instance' | 'attempt' | 'leaseUntil' | 'leaseToken'>;

/** One delivery attempt as the API shows it: its entity's columns (ids and seqs bigint as text). */
export type HookDeliveryRow = Row<HookDelivery>;
