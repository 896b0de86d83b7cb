import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 29 step 16: the two JSON documents every trade writes (its journal row's stored answer and
 * its event's data) are `json`, not `jsonb`. Nothing queries inside them but `->>` (which json has
 * too); jsonb's input parses every number into a numeric and rebuilds the document, about 2.4x the
 * cost of json's check, inside the lane's serial write. json keeps the text as sent (what reads it
 * parses it either way). Rewrites both tables once.
 */
export class JsonPayloads1764109700000 implements MigrationInterface {
  name = 'JsonPayloads1764109700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trade_requests ALTER COLUMN response TYPE json USING response::json`);
    await q.query(`ALTER TABLE outbox ALTER COLUMN data TYPE json USING data::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ALTER COLUMN data TYPE jsonb USING data::jsonb`);
    await q.query(`ALTER TABLE trade_requests ALTER COLUMN response TYPE jsonb USING response::jsonb`);
  }
}
