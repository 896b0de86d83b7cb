import type { Deps } from '../../deps';

/**
 * Publish unpublished outbox rows to Redis streams (`<prefix>:events:<workspaceId>`), then mark
 * them. At-least-once: a crash between XADD and the update republishes, never loses.
 */
export async function relayOutbox(deps: Deps, batch = 500): Promise<{ published: number }> {
  let published = 0;
  for (;;) {
    const rows: Array<{ id: string; workspace_id: string | null; type: string; data: unknown; created_at: Date }> = await deps.ds.query(
      `SELECT id, workspace_id, type, data, created_at FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1`,
      [batch],
    );
    if (!rows.length) return { published };
    const pipe = deps.redis.pipeline();
    for (const r of rows) {
      const stream = `${deps.config.QUEUE_PREFIX}:events:${r.workspace_id ?? 'platform'}`;
      pipe.xadd(stream, 'MAXLEN', '~', '10000', '*', 'id', r.id, 'type', r.type, 'data', JSON.stringify(r.data), 'at', r.created_at.toISOString());
    }
    await pipe.exec();
    await deps.ds.query(`UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
    published += rows.length;
    if (rows.length < batch) return { published };
  }
}
