import { randomBytes } from 'node:crypto';
import type { Deps } from '../../deps';
import type { Principal } from '../../domain/capabilities';
import { normalizeSubscriptions, type Subscription } from '../../domain/webhooks';
import { Hook } from '../../entities/hooks';
import { DomainError } from '../../errors';
import { EVENT_TYPES } from '../events';
import { urlProblem } from './send';
import { firstRow, rows } from '../../db/queryRows';

/** Old and new secrets both sign for this long after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface HookInput {
  url: string;
  events: Array<string | Subscription>;
  description?: string;
}

/** `whsec_` + 32 random bytes, base64 (the Standard Webhooks secret form). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The way out of a refused URL: which setting of the instance would accept it (for local development). */
function remedyOf(problem: string): string {
  if (problem === 'must be https') return ' An http URL is accepted only when the instance runs with WEBHOOK_ALLOW_HTTP=true (local development).';
  if (problem.includes('private')) return ' Such an address is accepted only when the instance runs with WEBHOOK_ALLOW_PRIVATE=true (local development).';
  return '';
}

function checkUrl(deps: Deps, url: string): void {
  const problem = urlProblem(url, { allowHttp: deps.config.WEBHOOK_ALLOW_HTTP, allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE });
  if (problem) throw new DomainError('validation_failed', `The hook url ${problem}.${remedyOf(problem)}`, { issues: [{ path: 'url', message: problem }] });
}

function checkEvents(events: HookInput['events']): Subscription[] {
  const subs = normalizeSubscriptions(events);
  const known = new Set<string>(EVENT_TYPES);
  const unknown = subs.filter((s) => !known.has(s.type)).map((s) => s.type);
  if (unknown.length) {
    throw new DomainError('validation_failed', `Unknown event type ${unknown.join(', ')}; the types are ${EVENT_TYPES.join(', ')}.`, {
      issues: [{ path: 'events', message: 'unknown event type' }],
    });
  }
  const narrowed = subs.filter((s) => (s.metricNames || s.metricIds) && s.type !== 'metric:updated').map((s) => s.type);
  if (narrowed.length) {
    throw new DomainError('validation_failed', `metricNames and metricIds filter metric:updated only (not ${narrowed.join(', ')}).`, {
      issues: [{ path: 'events', message: 'metric filters apply to metric:updated only' }],
    });
  }
  return subs;
}

/** A hook starts at the log's head: it receives events written after it exists (replay reaches back). */
export async function createHook(deps: Deps, actor: Principal, workspaceId: string, input: HookInput): Promise<{ hook: Hook; secret: string }> {
  checkUrl(deps, input.url);
  const events = checkEvents(input.events);
  const secret = newSecret();
  const [row] = await rows<{ id: string }>(
    deps.ds,
    `INSERT INTO hooks (workspace_id, agent_id, url, description, events, secret, cursor_seq, instance)
     SELECT $1, $2, $3, $4, $5::jsonb, $6, last_seq, $7 FROM event_sequencer WHERE id = 1 RETURNING id`,
    [workspaceId, actor.agentId, input.url, input.description ?? '', JSON.stringify(events), secret, deps.config.QUEUE_PREFIX],
  );
  return { hook: await deps.ds.getRepository(Hook).findOneByOrFail({ id: row.id }), secret };
}

/** The caller's hooks (all of them for the master key), optionally in one workspace. */
export async function listHooks(deps: Deps, actor: Principal, workspaceId?: string): Promise<Hook[]> {
  const where: Record<string, string> = {};
  if (!actor.isMaster) where.agentId = actor.agentId;
  if (workspaceId) where.workspaceId = workspaceId;
  return deps.ds.getRepository(Hook).find({ where, order: { createdAt: 'ASC', id: 'ASC' } });
}

/** A hook of the caller's (the master key reaches every hook); another's is not found. */
export async function hookOf(deps: Deps, actor: Principal, id: string): Promise<Hook> {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
  const hook = uuid ? await deps.ds.getRepository(Hook).findOneBy({ id }) : null;
  if (!hook || (!actor.isMaster && hook.agentId !== actor.agentId)) throw new DomainError('not_found', `No hook ${id} of yours exists.`);
  return hook;
}

export interface HookPatch {
  url?: string;
  events?: HookInput['events'];
  description?: string;
  /** true re-enables a disabled endpoint (its failure streak starts over); false disables it. */
  enabled?: boolean;
}

export async function updateHook(deps: Deps, actor: Principal, id: string, patch: HookPatch): Promise<Hook> {
  const hook = await hookOf(deps, actor, id);
  if (patch.url !== undefined) {
    checkUrl(deps, patch.url);
    hook.url = patch.url;
  }
  if (patch.events !== undefined) hook.events = checkEvents(patch.events);
  if (patch.description !== undefined) hook.description = patch.description;
  if (patch.enabled === true && hook.disabledAt) {
    Object.assign(hook, { disabledAt: null, disabledReason: null, failingSince: null, attempt: 0, nextAttemptAt: null });
  } else if (patch.enabled === false && !hook.disabledAt) {
    Object.assign(hook, { disabledAt: new Date(), disabledReason: 'disabled by its owner' });
  }
  hook.updatedAt = new Date();
  return deps.ds.getRepository(Hook).save(hook);
}

export async function deleteHook(deps: Deps, actor: Principal, id: string): Promise<void> {
  const hook = await hookOf(deps, actor, id);
  await deps.ds.getRepository(Hook).delete({ id: hook.id });
}

/** A new secret, shown once; the previous one keeps signing beside it for 24 h. */
export async function rotateHookSecret(deps: Deps, actor: Principal, id: string): Promise<{ hook: Hook; secret: string }> {
  const hook = await hookOf(deps, actor, id);
  const secret = newSecret();
  const row = await firstRow<{ id: string }>(
    deps.ds,
    `WITH u AS (UPDATE hooks SET previous_secret = secret, previous_secret_until = now() + $2 * interval '1 millisecond', secret = $3, updated_at = now()
                 WHERE id = $1 RETURNING id) SELECT id FROM u`,
    [hook.id, ROTATION_OVERLAP_MS, secret],
  );
  if (!row) throw new DomainError('not_found', `No hook ${id} of yours exists.`);
  return { hook: await deps.ds.getRepository(Hook).findOneByOrFail({ id: hook.id }), secret };
}

/** The secrets that sign right now: the current one, and the previous one while the rotation overlap lasts. */
export function signingSecrets(hook: Pick<Hook, 'secret' | 'previousSecret' | 'previousSecretUntil'>, now: Date): string[] {
  return hook.previousSecret && hook.previousSecretUntil && hook.previousSecretUntil > now ? [hook.secret, hook.previousSecret] : [hook.secret];
}
