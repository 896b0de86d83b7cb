import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who funded which book and with how much (issue 28): one row per funding (the book's opening
 * subsidy, or a later POST /predictions/markets/{id}/fund of an unfunded book). At resolution and
 * at void the pool's remainder goes back to the funders pro rata of these amounts. A funder whose
 * participant is deleted keeps its row with agent_id null (its share goes to the treasury).
 * Live funded books are backfilled from markets.funder_id and liquidity.
 */
export class MarketFunders1763900000000 implements MigrationInterface {
  name = 'MarketFunders1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE market_funders (
        id bigserial PRIMARY KEY,
        market_id uuid NOT NULL REFERENCES markets(id) ON DELETE CASCADE,
        agent_id text REFERENCES agents(id) ON DELETE SET NULL,
        amount bigint NOT NULL CONSTRAINT market_funders_amount_check CHECK (amount > 0),
        created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX market_funders_market ON market_funders (market_id, id)`);
    await q.query(`
      INSERT INTO market_funders (market_id, agent_id, amount, created_at)
      SELECT id, funder_id, liquidity, created_at FROM markets
       WHERE funded AND liquidity > 0 AND funder_id IS NOT NULL AND status IN ('open','closed')
       ORDER BY created_at, id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE market_funders`);
  }
}
