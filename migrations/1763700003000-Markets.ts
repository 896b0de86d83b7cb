import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Markets1763700003000 implements MigrationInterface {
  name = 'Markets1763700003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE markets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      metric_id uuid NOT NULL REFERENCES metrics(id) ON DELETE CASCADE,
      proposal_id uuid,
      branch text CHECK (branch IN ('approved','declined')),
      target_date text NOT NULL,
      granularity text NOT NULL,
      period_start timestamptz,
      period_end timestamptz,
      resolves_on text NOT NULL,
      horizon_entry text,
      title text,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','closed','resolved','voided')),
      range_min double precision NOT NULL DEFAULT 0,
      range_max double precision NOT NULL,
      funder_id text REFERENCES agents(id) ON DELETE SET NULL,
      funded boolean NOT NULL DEFAULT false,
      liquidity bigint NOT NULL DEFAULT 0,
      b bigint NOT NULL DEFAULT 0,
      q_higher bigint NOT NULL DEFAULT 0,
      q_lower bigint NOT NULL DEFAULT 0,
      q0_higher bigint NOT NULL DEFAULT 0,
      q0_lower bigint NOT NULL DEFAULT 0,
      opened_probability double precision,
      trade_count integer NOT NULL DEFAULT 0,
      volume bigint NOT NULL DEFAULT 0,
      last_trade_at timestamptz,
      resolved_value double precision,
      resolved_at timestamptz,
      settled_early boolean NOT NULL DEFAULT false,
      close_reason text,
      trading_ends_at timestamptz,
      void_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    // One live book per (metric, date, proposal, branch): spawning is idempotent through it.
    await q.query(`CREATE UNIQUE INDEX markets_live_key ON markets (metric_id, target_date, coalesce(proposal_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(branch, ''))
                   WHERE status IN ('open','closed')`);
    await q.query(`CREATE INDEX markets_workspace ON markets (workspace_id, status)`);
    await q.query(`CREATE INDEX markets_metric ON markets (metric_id, status)`);
    await q.query(`CREATE INDEX markets_proposal ON markets (proposal_id) WHERE proposal_id IS NOT NULL`);
    await q.query(`CREATE INDEX markets_due ON markets (period_end) WHERE status IN ('open','closed')`);

    await q.query(`CREATE TABLE positions (
      market_id uuid NOT NULL REFERENCES markets(id) ON DELETE CASCADE,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      shares_higher bigint NOT NULL DEFAULT 0 CHECK (shares_higher >= 0),
      shares_lower bigint NOT NULL DEFAULT 0 CHECK (shares_lower >= 0),
      net_cost bigint NOT NULL DEFAULT 0,
      payout bigint,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (market_id, agent_id))`);
    await q.query(`CREATE INDEX positions_agent ON positions (agent_id)`);

    await q.query(`CREATE TABLE trades (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigserial UNIQUE,
      request_id text,
      market_id uuid NOT NULL REFERENCES markets(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('buy','sell','redeem')),
      direction text CHECK (direction IN ('higher','lower')),
      shares bigint NOT NULL,
      cost bigint NOT NULL,
      probability_before double precision NOT NULL,
      probability_after double precision NOT NULL,
      consensus_before double precision NOT NULL,
      consensus_after double precision NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX trades_market ON trades (market_id, seq)`);
    await q.query(`CREATE INDEX trades_agent ON trades (agent_id, seq DESC)`);

    // The outcome of every trade request, by request id (= job id): replays and the API's fallback read.
    await q.query(`CREATE TABLE trade_requests (
      request_id text PRIMARY KEY,
      agent_id text NOT NULL,
      workspace_id uuid NOT NULL,
      idempotency_key text,
      body_hash text,
      status text NOT NULL CHECK (status IN ('pending','done','failed')),
      http_status integer,
      response jsonb,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE UNIQUE INDEX trade_requests_idem ON trade_requests (agent_id, workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL`);
    await q.query(`CREATE INDEX trade_requests_age ON trade_requests (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['trade_requests', 'trades', 'positions', 'markets']) await q.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
  }
}
