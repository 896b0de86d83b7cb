/**
 * Webhook rules without I/O: which events reach an endpoint (subscriptions, metric filters,
 * notification switches), how an answer is classified, and when the next attempt goes out.
 */

/** Attempt n+1 goes out RETRY_SCHEDULE_MS[n] after attempt n failed (the first one at once). */
export const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000] as const;

/** A hook's subscription: every event of a type, or metric:updated narrowed to some metrics. */
export interface Subscription {
  type: string;
  metricNames?: string[];
  metricIds?: string[];
}

/** Spec §2.7 notification switches; an agent without stored switches has these. */
export const NOTIFICATION_SWITCHES = ['commentOnMyProposal', 'replyToMyComment', 'newProposal', 'anyComment', 'marketResolved', 'contractDecided'] as const;
export type NotificationSwitch = (typeof NOTIFICATION_SWITCHES)[number];
export type Switches = Record<NotificationSwitch, boolean>;
export const DEFAULT_SWITCHES: Switches = {
  commentOnMyProposal: true,
  replyToMyComment: true,
  newProposal: true,
  anyComment: false,
  marketResolved: true,
  contractDecided: true,
};

export function switchesOf(stored: Partial<Record<string, boolean>> | null | undefined): Switches {
  const out = { ...DEFAULT_SWITCHES };
  for (const k of NOTIFICATION_SWITCHES) if (typeof stored?.[k] === 'boolean') out[k] = stored[k] as boolean;
  return out;
}

/** Which switch gates an event type (types without one always pass). */
const SWITCH_OF_TYPE: Partial<Record<string, NotificationSwitch>> = {
  'proposal:created': 'newProposal',
  'market:resolved': 'marketResolved',
  'proposal:status_changed': 'contractDecided',
};

/** One string or object per entry; repeated types merge (a bare type string wins: it matches all). */
export function normalizeSubscriptions(entries: ReadonlyArray<string | Subscription>): Subscription[] {
  const byType = new Map<string, Subscription>();
  for (const e of entries) {
    const s: Subscription = typeof e === 'string' ? { type: e } : e;
    const seen = byType.get(s.type);
    const narrow = !!(s.metricNames?.length || s.metricIds?.length);
    if (!narrow) {
      byType.set(s.type, { type: s.type });
      continue;
    }
    if (seen && !seen.metricNames && !seen.metricIds) continue;
    const merged: Subscription = { type: s.type };
    const names = [...(seen?.metricNames ?? []), ...(s.metricNames ?? [])];
    const ids = [...(seen?.metricIds ?? []), ...(s.metricIds ?? [])];
    if (names.length) merged.metricNames = [...new Set(names)];
    if (ids.length) merged.metricIds = [...new Set(ids)];
    byType.set(s.type, merged);
  }
  return [...byType.values()];
}

export interface LoggedEvent {
  type: string;
  data: Record<string, unknown>;
  /** The one participant the event is addressed to, if any. */
  agentId: string | null;
}

/** Does this event go to an endpoint owned by `ownerId` with these subscriptions and switches? */
export function eventMatches(subs: readonly Subscription[], switches: Switches, ownerId: string, e: LoggedEvent): boolean {
  if (e.agentId && e.agentId !== ownerId) return false;
  const sub = subs.find((s) => s.type === e.type);
  if (!sub) return false;
  if (sub.metricNames || sub.metricIds) {
    const name = typeof e.data.metricName === 'string' ? e.data.metricName.toLowerCase() : null;
    const id = typeof e.data.metricId === 'string' ? e.data.metricId : null;
    const byName = !!name && !!sub.metricNames?.some((n) => n.toLowerCase() === name);
    const byId = !!id && !!sub.metricIds?.includes(id);
    if (!byName && !byId) return false;
  }
  if (e.type === 'proposal:commented') {
    return (
      switches.anyComment ||
      (switches.commentOnMyProposal && e.data.proposalAuthorId === ownerId) ||
      (switches.replyToMyComment && e.data.parentAuthorId === ownerId)
    );
  }
  const sw = SWITCH_OF_TYPE[e.type];
  return sw ? switches[sw] : true;
}

export type AnswerClass = 'delivered' | 'gone' | 'backoff' | 'failed';

/** 2xx delivered; 410 disables; 429/502/504 back off (Retry-After honoured); anything else, 3xx included, failed. */
export function classifyAnswer(status: number | null): AnswerClass {
  if (status === null) return 'failed';
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  if (status === 429 || status === 502 || status === 504) return 'backoff';
  return 'failed';
}

/** Retry-After as delta seconds or an HTTP date, in ms from `now`; null when absent or unreadable. Capped at a day. */
export function retryAfterMs(header: string | undefined | null, now: Date): number | null {
  if (!header) return null;
  const v = header.trim();
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return null;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), 86_400_000);
}

/**
 * The wait before the next attempt after `failedAttempts` attempts of one event failed (1-based),
 * scaled (tests run the schedule in milliseconds) with +-10 % jitter; null once the schedule is spent.
 */
export function nextRetryDelay(failedAttempts: number, scale: number, random: () => number = Math.random): number | null {
  if (failedAttempts < 1 || failedAttempts >= RETRY_SCHEDULE_MS.length) return null;
  const base = RETRY_SCHEDULE_MS[failedAttempts] * scale;
  return Math.round(base * (0.9 + 0.2 * random()));
}
