import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Credits and the chain: the idempotency journal of money moves, transfers, registered wallets,
 * USDC deposits (one credit per (chain, tx, log)) and withdrawals (the signed tx recorded before it
 * is broadcast), plus the named system accounts they move through.
 */
export class Credits1763800100000 implements MigrationInterface {
  name = 'Credits1763800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE money_requests (
      participant_id text NOT NULL,
      scope text NOT NULL,
      idempotency_key text NOT NULL,
      body_hash text NOT NULL,
      outcome jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (participant_id, scope, idempotency_key))`);
    await q.query(`CREATE INDEX money_requests_age ON money_requests (created_at)`);
    await q.query(`CREATE TABLE transfers (
      id uuid PRIMARY KEY,
      from_agent text NOT NULL,
      to_agent text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      memo text,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX transfers_from ON transfers (from_agent, created_at)`);
    await q.query(`CREATE INDEX transfers_to ON transfers (to_agent, created_at)`);
    await q.query(`CREATE TABLE agent_wallets (
      agent_id text PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
      address text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE TABLE deposits (
      id uuid PRIMARY KEY,
      agent_id text NOT NULL,
      chain_id bigint NOT NULL,
      tx_hash text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending','credited','rejected','flagged')),
      reason text,
      from_address text,
      amount_units bigint,
      credits bigint,
      fee bigint,
      block_number bigint,
      block_hash text,
      checks integer NOT NULL DEFAULT 0,
      final boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz,
      CONSTRAINT deposits_tx UNIQUE (chain_id, tx_hash))`);
    await q.query(`CREATE INDEX deposits_agent ON deposits (agent_id, created_at)`);
    await q.query(`CREATE TABLE deposit_logs (
      chain_id bigint NOT NULL,
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      deposit_id uuid NOT NULL,
      from_address text NOT NULL,
      amount_units bigint NOT NULL,
      PRIMARY KEY (chain_id, tx_hash, log_index))`);
    await q.query(`CREATE TABLE withdrawals (
      id uuid PRIMARY KEY,
      agent_id text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      units bigint NOT NULL,
      to_address text NOT NULL,
      status text NOT NULL CHECK (status IN ('review','queued','signed','confirmed','failed','rejected')),
      reason text,
      signer text,
      nonce integer,
      tx_hash text,
      raw_tx text,
      block_number bigint,
      decided_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz)`);
    await q.query(`CREATE INDEX withdrawals_agent ON withdrawals (agent_id, created_at)`);
    await q.query(`CREATE UNIQUE INDEX withdrawals_nonce ON withdrawals (signer, nonce) WHERE nonce IS NOT NULL`);
    await q.query(`INSERT INTO accounts (id, kind) VALUES
      ('spend:tokens', 'treasury'), ('spend:purchase', 'treasury'), ('spend:betting', 'treasury'),
      ('fees:deposit', 'treasury'), ('withdrawals:pending', 'treasury'), ('onchain:usdc', 'issuance')
      ON CONFLICT (id) DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['withdrawals', 'deposit_logs', 'deposits', 'agent_wallets', 'transfers', 'money_requests']) await q.query(`DROP TABLE IF EXISTS ${t} CASCADE`);
  }
}
