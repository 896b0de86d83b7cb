import fc from 'fast-check';
import {
  classifyAnswer,
  DEFAULT_SWITCHES,
  eventMatches,
  nextRetryDelay,
  normalizeSubscriptions,
  RETRY_SCHEDULE_MS,
  retryAfterMs,
  switchesOf,
} from '../../src/domain/webhooks';

describe('the retry schedule', () => {
  it('is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h; spent after the tenth attempt', () => {
    const h = 3_600_000;
    expect(RETRY_SCHEDULE_MS).toEqual([0, 5_000, 300_000, 1_800_000, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h]);
    expect(nextRetryDelay(1, 1, () => 0.5)).toBe(5_000);
    expect(nextRetryDelay(9, 1, () => 0.5)).toBe(24 * h);
    expect(nextRetryDelay(10, 1)).toBeNull();
    expect(nextRetryDelay(0, 1)).toBeNull();
  });

  it('jitter stays within 10 % of the scheduled wait, scaled', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.double({ min: 0.0001, max: 1, noNaN: true }), (n, r, scale) => {
        const d = nextRetryDelay(n, scale, () => r)!;
        const base = RETRY_SCHEDULE_MS[n] * scale;
        return d >= Math.floor(base * 0.9) && d <= Math.ceil(base * 1.1);
      }),
    );
  });
});

describe('answers', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [301, 'failed'],
    [302, 'failed'],
    [400, 'failed'],
    [410, 'gone'],
    [429, 'backoff'],
    [500, 'failed'],
    [502, 'backoff'],
    [503, 'failed'],
    [504, 'backoff'],
    [null, 'failed'],
  ] as const)('%s is %s', (status, cls) => {
    expect(classifyAnswer(status)).toBe(cls);
  });

  it('Retry-After in seconds or as an HTTP date, capped at a day', () => {
    const now = new Date('2026-11-22T10:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('999999', now)).toBe(86_400_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });
});

describe('which events reach an endpoint', () => {
  const e = (type: string, data: Record<string, unknown> = {}, agentId: string | null = null) => ({ type, data, agentId });

  it('a bare type matches all of that type; metric filters narrow metric:updated by name (any case) or id', () => {
    const subs = normalizeSubscriptions(['trade:executed', { type: 'metric:updated', metricNames: ['Revenue'], metricIds: ['m2'] }]);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e('trade:executed'))).toBe(true);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e('market:created'))).toBe(false);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e('metric:updated', { metricName: 'revenue', metricId: 'm1' }))).toBe(true);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e('metric:updated', { metricName: 'cost', metricId: 'm2' }))).toBe(true);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e('metric:updated', { metricName: 'cost', metricId: 'm3' }))).toBe(false);
  });

  it('an event addressed to one participant reaches only its endpoints', () => {
    const subs = normalizeSubscriptions(['endpoint:disabled']);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e('endpoint:disabled', {}, 'a'))).toBe(true);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'b', e('endpoint:disabled', {}, 'a'))).toBe(false);
  });

  it('switches gate their event types; stored switches override the defaults one by one', () => {
    const subs = normalizeSubscriptions(['proposal:created', 'market:resolved', 'proposal:status_changed', 'trade:executed']);
    const off = switchesOf({ newProposal: false, marketResolved: false, contractDecided: false, bogus: true } as Record<string, boolean>);
    expect(off).toEqual({ ...DEFAULT_SWITCHES, newProposal: false, marketResolved: false, contractDecided: false });
    for (const t of ['proposal:created', 'market:resolved', 'proposal:status_changed']) {
      expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', e(t))).toBe(true);
      expect(eventMatches(subs, off, 'a', e(t))).toBe(false);
    }
    expect(eventMatches(subs, off, 'a', e('trade:executed'))).toBe(true);
  });

  it('comments reach an agent when they are on its proposal or reply to its comment, or with anyComment', () => {
    const subs = normalizeSubscriptions(['proposal:commented']);
    const c = (proposalAuthorId: string | null, parentAuthorId: string | null) => e('proposal:commented', { proposalAuthorId, parentAuthorId });
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', c('a', null))).toBe(true);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', c('b', 'a'))).toBe(true);
    expect(eventMatches(subs, DEFAULT_SWITCHES, 'a', c('b', 'b'))).toBe(false);
    expect(eventMatches(subs, { ...DEFAULT_SWITCHES, anyComment: true }, 'a', c('b', null))).toBe(true);
    expect(eventMatches(subs, { ...DEFAULT_SWITCHES, commentOnMyProposal: false }, 'a', c('a', null))).toBe(false);
    expect(eventMatches(subs, { ...DEFAULT_SWITCHES, replyToMyComment: false }, 'a', c('b', 'a'))).toBe(false);
  });

  it('normalizing: a bare type wins over filters of the same type; filters of one type merge', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 4 }), fc.array(fc.constantFrom('x', 'y'), { maxLength: 4 }), fc.boolean(), (names, ids, bare) => {
        const entries = [{ type: 'metric:updated', metricNames: names }, { type: 'metric:updated', metricIds: ids }, ...(bare ? ['metric:updated'] : [])];
        const [s, ...rest] = normalizeSubscriptions(entries);
        if (rest.length) return false;
        // An entry with empty filters is a bare type too.
        if (bare || !names.length || !ids.length) return s.metricNames === undefined && s.metricIds === undefined;
        return new Set(s.metricNames).size === new Set(names).size && new Set(s.metricIds).size === new Set(ids).size;
      }),
    );
  });
});
