import type { Deps } from '../../deps';
import { poolPrepared, queryPipelined } from '../../db/prepared';
import { rows } from '../../db/queryRows';
import { inTransaction } from '../../db/tx';

/** One sequencer at a time, whatever the number of processes (a transaction-scoped advisory lock). */
const SEQUENCER_LOCK = 727301;
/** Postgres NOTIFY channel: "the log grew up to seq <payload>" (one notify per pass, never on the hot path). */
export const EVENTS_CHANNEL = 'mpps_events';

export interface SequencedPass {
  sequenced: number;
  lastSeq: string | null;
  /** Workspaces that got events in this pass (their hooks have work). */
  workspaceIds: string[];
}

/**
 * Give committed outbox rows their place in the event log. A bigserial id is taken at INSERT, not at
 * COMMIT, so a reader paging on it could skip a row that commits late with a lower id; instead this
 * one serialized pass numbers the rows it can see (committed ones) from a counter only it touches,
 * and commits before the next pass starts. A row committed late simply gets a later seq, so `seq > cursor`
 * never skips. The writers' transactions (the trade hot path among them) touch no shared counter.
 */
export async function sequenceEvents(deps: Deps, batch = 2000, opts: { probe?: boolean } = {}): Promise<SequencedPass> {
  const none: SequencedPass = { sequenced: 0, lastSeq: null, workspaceIds: [] };
  // Idle passes are one index probe, with no transaction and no write. A caller whose last pass
  // found rows (a steady flow) skips it: the pass would find rows again.
  if (opts.probe !== false) {
    const [pending] = await poolPrepared(deps.ds, `SELECT 1 AS x FROM outbox WHERE published_at IS NULL LIMIT 1`, []);
    if (!pending) return none;
  }
  // Two round trips (the transaction's BEGIN goes with the lock, its COMMIT with the numbering):
  // a pass runs every EVENTS_POLL_MS under a steady flow, as often as the trade lanes' batches.
  return inTransaction(
    deps.ds,
    async (m) => {
      const [[{ got }]] = (await queryPipelined(m, [{ text: `SELECT pg_try_advisory_xact_lock($1) AS got`, values: [SEQUENCER_LOCK] }])) as [[{ got: boolean }]];
      if (!got) return none;
      // A statement after the lock's: its snapshot sees everything the previous pass committed.
      const [rows] = (await queryPipelined(
        m,
        [
          {
            text: `WITH c AS (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1),
            s AS (UPDATE event_sequencer SET last_seq = last_seq + (SELECT count(*) FROM c) WHERE id = 1
                  RETURNING last_seq - (SELECT count(*) FROM c) AS base),
            u AS (UPDATE outbox o SET seq = s.base + c.rn, published_at = now() FROM c, s WHERE o.id = c.id
                  RETURNING o.seq, o.workspace_id),
            n AS (SELECT pg_notify($2, max(seq)::text) AS sent FROM u HAVING count(*) > 0)
       SELECT seq::text AS seq, workspace_id, (SELECT count(*) FROM n) AS notified FROM u`,
            values: [batch, EVENTS_CHANNEL],
          },
        ],
        { commit: true },
      )) as [Array<{ seq: string; workspace_id: string | null }>];
      if (!rows.length) return none;
      let last = 0n;
      for (const r of rows) if (BigInt(r.seq) > last) last = BigInt(r.seq);
      const ws = [...new Set(rows.map((r) => r.workspace_id).filter((w): w is string => !!w))];
      return { sequenced: rows.length, lastSeq: last.toString(), workspaceIds: ws };
    },
    { pipelined: true },
  );
}

/** Delete log entries older than the retention, in batches (the hooks area purges its delivery log: purgeDeliveries). */
export async function purgeEvents(deps: Deps, retentionDays: number): Promise<{ events: number }> {
  const cutoff = new Date(deps.clock.now().getTime() - retentionDays * 86_400_000);
  let events = 0;
  for (;;) {
    const [{ n }] = await rows<{ n: number }>(
      deps.ds,
      `WITH d AS (DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE created_at < $1 AND seq IS NOT NULL LIMIT 5000) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [cutoff],
    );
    events += n;
    if (n < 5000) break;
  }
  return { events };
}

/**
 * How far the log got since `after`, and which workspaces got events in between, whoever sequenced
 * them (another process's pass): a process kicks its own endpoints from this, not from its own passes.
 */
export async function logAdvance(deps: Deps, after: string): Promise<{ head: string; workspaceIds: string[] }> {
  const [r] = await poolPrepared<{ head: string | null; ws: string[] | null }>(
    deps.ds,
    `WITH h AS (SELECT last_seq FROM event_sequencer WHERE id = 1)
     SELECT (SELECT last_seq::text FROM h) AS head,
            CASE WHEN (SELECT last_seq FROM h) > $1::bigint
                 THEN coalesce((SELECT array_agg(DISTINCT workspace_id::text) FROM outbox
                                 WHERE seq > $1::bigint AND seq <= (SELECT last_seq FROM h) AND workspace_id IS NOT NULL), '{}')
                 ELSE '{}' END AS ws`,
    [after],
  );
  return { head: r?.head ?? after, workspaceIds: r?.ws ?? [] };
}
