import type { Deps } from '../../deps';
import { positionsOf, type PositionView } from './portfolio';

/** A participant's positions, live books first, over every workspace (workspaceId null) or in one. */
export async function agentPositions(deps: Deps, agentId: string, workspaceId: string | null): Promise<PositionView[]> {
  return positionsOf(deps.ds, agentId, workspaceId);
}
