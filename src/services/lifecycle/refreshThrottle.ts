import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { rows } from '../../db/queryRows';

const REFRESH_EVERY_S = 60;

/**
 * The unforced refresh runs at most once a minute per workspace: claims the slot, or refuses with
 * 429 rate_limited and the seconds to wait. A forced refresh always runs and takes the slot.
 */
export async function claimRefreshSlot(deps: Pick<Deps, 'ds' | 'clock'>, workspaceId: string, force: boolean): Promise<void> {
  const now = deps.clock.now();
  const claimed = await rows(
    deps.ds,
    `INSERT INTO workspace_refreshes (workspace_id, refreshed_at) VALUES ($1, $2)
     ON CONFLICT (workspace_id) DO UPDATE SET refreshed_at = EXCLUDED.refreshed_at
      WHERE $3 OR workspace_refreshes.refreshed_at <= $2::timestamptz - make_interval(secs => $4)
     RETURNING 1`,
    [workspaceId, now, force, REFRESH_EVERY_S],
  );
  if (claimed.length) return;
  const [{ refreshed_at }] = await rows<{ refreshed_at: Date }>(deps.ds, `SELECT refreshed_at FROM workspace_refreshes WHERE workspace_id = $1`, [workspaceId]);
  const retryAfter = Math.max(1, Math.ceil((new Date(refreshed_at).getTime() + REFRESH_EVERY_S * 1000 - now.getTime()) / 1000));
  throw new DomainError(
    'rate_limited',
    `This workspace's horizon pass ran less than a minute ago; retry in ${retryAfter} s, or send { "force": true } (minute floors do, every minute).`,
    { retryAfter, limit: 1, windowSeconds: REFRESH_EVERY_S, bucket: 'refresh' },
  );
}
