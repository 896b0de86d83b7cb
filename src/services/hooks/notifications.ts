import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { switchesOf, type NotificationSwitch, type Switches } from '../../domain/webhooks';
import { Agent } from '../../entities/agent';
import { resolveOwnedAgent } from '../access';
import { mergeNotifications } from '../identity';

/** A participant's notification switches (spec §2.7); itself or its creator. */
export async function notificationSwitches(deps: Deps, actor: Principal, idParam: string): Promise<{ agentId: string; notifications: Switches }> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam);
  const a = await deps.ds.getRepository(Agent).findOneOrFail({ select: { id: true, notifications: true }, where: { id: agentId } });
  return { agentId, notifications: switchesOf(a.notifications) };
}

/** Set some switches; the others keep their value. */
export async function setNotificationSwitches(
  deps: Deps,
  actor: Principal,
  idParam: string,
  patch: Partial<Record<NotificationSwitch, boolean>>,
): Promise<{ agentId: string; notifications: Switches }> {
  const agentId = await resolveOwnedAgent(deps.ds, actor, idParam);
  await mergeNotifications(deps.ds, agentId, patch);
  return notificationSwitches(deps, actor, agentId);
}
