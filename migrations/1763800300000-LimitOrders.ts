import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Resting limit orders (issue 14). An open order's unused reserve sits in the market's reserve
 * account (`reserve:<marketId>`, kind pool: it can never go negative); `reserve` here is this
 * order's part of it.
 */
export class LimitOrders1763800300000 implements MigrationInterface {
  name = 'LimitOrders1763800300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE limit_orders (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        market_id uuid NOT NULL REFERENCES markets(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL,
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        direction text NOT NULL CONSTRAINT limit_orders_direction_check CHECK (direction IN ('higher','lower')),
        limit_value double precision NOT NULL,
        limit_p double precision NOT NULL,
        price_nano bigint NOT NULL,
        shares bigint NOT NULL,
        filled bigint NOT NULL DEFAULT 0,
        immediate bigint NOT NULL DEFAULT 0,
        spent bigint NOT NULL DEFAULT 0,
        reserve bigint NOT NULL DEFAULT 0,
        status text NOT NULL DEFAULT 'open' CONSTRAINT limit_orders_status_check CHECK (status IN ('open','filled','cancelled','expired')),
        close_reason text,
        expires_at timestamptz,
        idempotency_key text,
        body_hash text,
        placement jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT limit_orders_seq_key UNIQUE (seq),
        CONSTRAINT limit_orders_fill_check CHECK (filled >= 0 AND filled <= shares AND reserve >= 0)
      )`);
    await q.query(`CREATE INDEX limit_orders_book ON limit_orders (market_id, direction, limit_p) WHERE status = 'open'`);
    await q.query(`CREATE INDEX limit_orders_agent ON limit_orders (agent_id, workspace_id, seq)`);
    await q.query(`CREATE INDEX limit_orders_expiry ON limit_orders (expires_at) WHERE status = 'open' AND expires_at IS NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX limit_orders_idempotency ON limit_orders (agent_id, workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE limit_orders`);
  }
}
