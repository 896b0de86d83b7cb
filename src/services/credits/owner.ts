import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../../domain/capabilities';
import { Agent } from '../../entities/agent';
import { DomainError } from '../../errors';

/** self/owner: the participant itself, its creator (parent, creator, claimer), or the master key. {id} may be 'me'. */
export async function ownedParticipant(m: DataSource | EntityManager, actor: Principal, idParam: string, act: string): Promise<string> {
  const id = idParam === 'me' ? actor.agentId : idParam;
  const a = await m.getRepository(Agent).findOne({ select: { id: true, parentId: true, createdBy: true, claimedBy: true }, where: { id } });
  if (!a) throw new DomainError('not_found', `Participant "${id}" was not found.`);
  if (actor.isMaster || a.id === actor.agentId || [a.parentId, a.createdBy, a.claimedBy].includes(actor.agentId)) return a.id;
  throw new DomainError('not_authorized', `Only the participant itself or its creator may ${act}.`, { requiredCapabilities: ['self/owner'] });
}
