import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A trade request's outcome is `done` with its result or `failed` with its error body; the HTTP
 * status follows from the error's catalog code at the edge, so the stored status goes.
 */
export class TradeOutcomeByCode1763700006000 implements MigrationInterface {
  name = 'TradeOutcomeByCode1763700006000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trade_requests DROP COLUMN http_status`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trade_requests ADD COLUMN http_status integer`);
    await q.query(`UPDATE trade_requests SET http_status = 200 WHERE status = 'done'`);
  }
}
