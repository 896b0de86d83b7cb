import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Proposals (spec §2.6, §3.1, §4.6): the proposal record, its discussion and its decision scorecard. */
export class Proposals1763700004000 implements MigrationInterface {
  name = 'Proposals1763700004000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE proposals (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigserial UNIQUE,
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
      description text NOT NULL DEFAULT '',
      proposed_by text REFERENCES agents(id) ON DELETE SET NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','approved','declined','withdrawn')),
      spam boolean NOT NULL DEFAULT false,
      liquidity bigint NOT NULL CHECK (liquidity >= 0),
      metric_ids uuid[] NOT NULL DEFAULT '{}',
      headline_metric_id uuid,
      headline_target_date text,
      deadline timestamptz,
      decided_by text REFERENCES agents(id) ON DELETE SET NULL,
      decided_at timestamptz,
      decision_trade_seq bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX proposals_workspace ON proposals (workspace_id, created_at DESC, seq DESC)`);
    await q.query(`CREATE INDEX proposals_proposer ON proposals (proposed_by) WHERE proposed_by IS NOT NULL`);
    // Money never disappears with a proposal: a proposal with branch books cannot be deleted on its own
    // (NO ACTION); workspace deletion refunds the books first and removes both in one statement.
    await q.query(`ALTER TABLE markets ADD CONSTRAINT markets_proposal_fk FOREIGN KEY (proposal_id) REFERENCES proposals(id)`);

    await q.query(`CREATE TABLE proposal_comments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigserial UNIQUE,
      proposal_id uuid NOT NULL REFERENCES proposals(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      author_id text REFERENCES agents(id) ON DELETE SET NULL,
      parent_id uuid REFERENCES proposal_comments(id) ON DELETE SET NULL,
      body text NOT NULL CHECK (length(body) BETWEEN 1 AND 5000),
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX proposal_comments_proposal ON proposal_comments (proposal_id, seq)`);

    // One row per resolved branch book; no FK to markets or metrics so the record outlives them.
    await q.query(`CREATE TABLE proposal_scorecard (
      id bigserial PRIMARY KEY,
      proposal_id uuid NOT NULL REFERENCES proposals(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      market_id uuid NOT NULL UNIQUE,
      metric_id uuid NOT NULL,
      metric_name text NOT NULL,
      target_date text NOT NULL,
      branch text NOT NULL CHECK (branch IN ('approved','declined')),
      decision text NOT NULL CHECK (decision IN ('pending','approved','declined','withdrawn')),
      taken boolean,
      realised_value double precision NOT NULL,
      range_min double precision NOT NULL,
      range_max double precision NOT NULL,
      approved_consensus double precision,
      declined_consensus double precision,
      predicted double precision,
      error double precision,
      within_range boolean,
      closer_than_other boolean,
      resolved_at timestamptz NOT NULL)`);
    await q.query(`CREATE INDEX proposal_scorecard_workspace ON proposal_scorecard (workspace_id, id)`);
    await q.query(`CREATE INDEX proposal_scorecard_proposal ON proposal_scorecard (proposal_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE markets DROP CONSTRAINT IF EXISTS markets_proposal_fk`);
    for (const t of ['proposal_scorecard', 'proposal_comments', 'proposals']) await q.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
  }
}
