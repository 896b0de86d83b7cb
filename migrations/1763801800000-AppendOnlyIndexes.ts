import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fewer index entries per trade on the append-only tables (issue 17), only where nothing reads the
 * index: ledger_entries (transfer_id) serves only the invariant audit, which reads every row anyway;
 * trades' UNIQUE on seq repeats what its bigserial guarantees (trades_market / trades_agent serve
 * the reads by seq); outbox (workspace_id, id) has no reader (feeds and hooks go by seq); the
 * journal's age index serves only the 48-hour purge's range, which a BRIN index serves at a sliver
 * of the upkeep (rows arrive in time order).
 */
export class AppendOnlyIndexes1763801800000 implements MigrationInterface {
  name = 'AppendOnlyIndexes1763801800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ledger_entries_transfer`);
    await q.query(`ALTER TABLE trades DROP CONSTRAINT IF EXISTS trades_seq_key`);
    await q.query(`DROP INDEX IF EXISTS outbox_workspace`);
    await q.query(`DROP INDEX IF EXISTS trade_requests_age`);
    await q.query(`CREATE INDEX trade_requests_age ON trade_requests USING brin (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS trade_requests_age`);
    await q.query(`CREATE INDEX trade_requests_age ON trade_requests (created_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS outbox_workspace ON outbox (workspace_id, id)`);
    await q.query(`ALTER TABLE trades ADD CONSTRAINT trades_seq_key UNIQUE (seq)`);
    await q.query(`CREATE INDEX IF NOT EXISTS ledger_entries_transfer ON ledger_entries (transfer_id)`);
  }
}
