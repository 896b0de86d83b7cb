import fc from 'fast-check';
import {
  addDays,
  addHours,
  addMinutes,
  addMonths,
  addWeeks,
  addYears,
  endOfDay,
  endOfISOWeek,
  endOfMonth,
  endOfYear,
  format,
  getDaysInMonth,
  getISOWeek,
  getISOWeeksInYear,
  getISOWeekYear,
  startOfDay,
  startOfISOWeek,
  startOfMonth,
  startOfYear,
} from 'date-fns';
import {
  defaultHorizons,
  desiredHorizons,
  HorizonError,
  isInside,
  isRolling,
  parseTargetDate,
  Period,
  periodContaining,
  validateHorizonEntry,
  validateTimePreference,
  type ClockGranularity,
} from '../../src/domain/horizons';

// ---------- independent reference (date-fns) ----------

// date-fns works in local time and jest does not let the file switch TZ, so the reference is TZ-proof by construction:
// calendar work happens on a local-noon Date carrying the instant's UTC calendar date (no DST change happens at noon),
// and only local date fields are read back. Hour and minute cells are plain UTC fields plus real-time addHours/addMinutes.
const noonOf = (d: Date) => new Date(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 12);
const utcMidnight = (local: Date) => new Date(Date.UTC(local.getFullYear(), local.getMonth(), local.getDate()));
const pad2 = (n: number) => String(n).padStart(2, '0');

type DayGranularity = 'year' | 'month' | 'week' | 'day';
const REF: Record<DayGranularity, { start: (d: Date) => Date; endIncl: (d: Date) => Date; key: (d: Date) => string }> = {
  year: { start: startOfYear, endIncl: endOfYear, key: (d) => format(d, 'yyyy') },
  month: { start: startOfMonth, endIncl: endOfMonth, key: (d) => format(d, 'yyyy-MM') },
  week: { start: startOfISOWeek, endIncl: endOfISOWeek, key: (d) => `${getISOWeekYear(d)}-W${pad2(getISOWeek(d))}` },
  day: { start: startOfDay, endIncl: endOfDay, key: (d) => format(d, 'yyyy-MM-dd') },
};

/** Reference cell of granularity g for a local-noon date. */
function refDayCell(noon: Date, g: DayGranularity) {
  const r = REF[g];
  const endIncl = r.endIncl(noon);
  return {
    targetDate: r.key(noon),
    start: utcMidnight(r.start(noon)),
    end: utcMidnight(addDays(endIncl, 1)),
    resolvesOn: format(endIncl, 'yyyy-MM-dd'),
  };
}

function refCell(instant: Date, g: ClockGranularity) {
  if (g !== 'hour' && g !== 'minute') return refDayCell(noonOf(instant), g);
  const day = format(noonOf(instant), 'yyyy-MM-dd');
  const h = instant.getUTCHours();
  if (g === 'hour') {
    const start = new Date(`${day}T${pad2(h)}:00:00Z`);
    return { targetDate: `${day}T${pad2(h)}`, start, end: addHours(start, 1), resolvesOn: day };
  }
  const mi = instant.getUTCMinutes();
  const start = new Date(`${day}T${pad2(h)}:${pad2(mi)}:00Z`);
  return { targetDate: `${day}T${pad2(h)}:${pad2(mi)}`, start, end: addMinutes(start, 1), resolvesOn: day };
}

const summary = (p: Period) => ({ targetDate: p.targetDate, start: p.start, end: p.end, resolvesOn: p.resolvesOn });

// ---------- generators ----------

const instantArb = fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2200-12-31T23:59:59.999Z'), noInvalidDate: true });
const granArb = fc.constantFrom<ClockGranularity>('year', 'month', 'week', 'day', 'hour', 'minute');

const iso = (s: string) => new Date(s);
const NOW = iso('2026-11-21T12:00:00Z');

// ---------- absolute forms ----------

describe('absolute target dates', () => {
  test.each([
    ['2026', 'year', '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', '2026-12-31'],
    ['2026-11', 'month', '2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z', '2026-11-30'],
    ['2028-02', 'month', '2028-02-01T00:00:00Z', '2028-03-01T00:00:00Z', '2028-02-29'],
    ['2026-02', 'month', '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z', '2026-02-28'],
    ['2100-02', 'month', '2100-02-01T00:00:00Z', '2100-03-01T00:00:00Z', '2100-02-28'],
    ['2000-02', 'month', '2000-02-01T00:00:00Z', '2000-03-01T00:00:00Z', '2000-02-29'],
    ['2026-W48', 'week', '2026-11-23T00:00:00Z', '2026-11-30T00:00:00Z', '2026-11-29'],
    ['2026-W53', 'week', '2026-12-28T00:00:00Z', '2027-01-04T00:00:00Z', '2027-01-03'],
    ['2026-W01', 'week', '2025-12-29T00:00:00Z', '2026-01-05T00:00:00Z', '2026-01-04'],
    ['2020-W53', 'week', '2020-12-28T00:00:00Z', '2021-01-04T00:00:00Z', '2021-01-03'],
    ['2026-11-21', 'day', '2026-11-21T00:00:00Z', '2026-11-22T00:00:00Z', '2026-11-21'],
    ['2028-02-29', 'day', '2028-02-29T00:00:00Z', '2028-03-01T00:00:00Z', '2028-02-29'],
    ['2026-11-21T10', 'hour', '2026-11-21T10:00:00Z', '2026-11-21T11:00:00Z', '2026-11-21'],
    ['2026-11-21T23', 'hour', '2026-11-21T23:00:00Z', '2026-11-22T00:00:00Z', '2026-11-21'],
    ['2026-11-21T10:05', 'minute', '2026-11-21T10:05:00Z', '2026-11-21T10:06:00Z', '2026-11-21'],
    ['2026-12-31T23:59', 'minute', '2026-12-31T23:59:00Z', '2027-01-01T00:00:00Z', '2026-12-31'],
  ])('%s is a %s from %s to %s, resolving on %s', (text, granularity, start, end, resolvesOn) => {
    const p = parseTargetDate(text, NOW);
    expect(p).toEqual({ targetDate: text, granularity, start: iso(start), end: iso(end), resolvesOn });
  });

  test('absolute dates ignore now', () => {
    expect(parseTargetDate('2026-11', iso('1999-01-01T00:00:00Z'))).toEqual(parseTargetDate('2026-11', NOW));
  });

  test('29 February follows the Gregorian leap rule', () => {
    for (const y of ['2000', '2024', '2028', '2400']) expect(validateHorizonEntry(`${y}-02-29`)).toBeNull();
    for (const y of ['1900', '2026', '2100', '2200']) expect(validateHorizonEntry(`${y}-02-29`)).toMatch(/has 28 days/);
  });

  test('which ISO years have 53 weeks', () => {
    expect(validateHorizonEntry('2026-W53')).toBeNull();
    expect(validateHorizonEntry('2020-W53')).toBeNull();
    expect(validateHorizonEntry('2027-W53')).toMatch(/2027 has 52 weeks/);
    expect(validateHorizonEntry('2025-W53')).toMatch(/2025 has 52 weeks/);
  });

  test('ISO weeks across the year boundary', () => {
    expect(periodContaining(iso('2026-12-31T12:00:00Z'), 'week').targetDate).toBe('2026-W53');
    expect(periodContaining(iso('2027-01-01T00:00:00Z'), 'week').targetDate).toBe('2026-W53');
    expect(periodContaining(iso('2027-01-03T23:59:59.999Z'), 'week').targetDate).toBe('2026-W53');
    expect(periodContaining(iso('2027-01-04T00:00:00Z'), 'week').targetDate).toBe('2027-W01');
    expect(periodContaining(iso('2025-12-29T00:00:00Z'), 'week').targetDate).toBe('2026-W01');
    expect(periodContaining(iso('2025-12-28T23:59:59.999Z'), 'week').targetDate).toBe('2025-W52');
  });

  test('years below 100 are not shifted into the 1900s', () => {
    expect(parseTargetDate('0050-03', NOW).start).toEqual(iso('0050-03-01T00:00:00Z'));
    expect(periodContaining(iso('0001-01-01T00:00:00Z'), 'week').targetDate).toBe('0001-W01');
  });
});

// ---------- relative forms ----------

describe('rolling target dates', () => {
  const endOfJan = iso('2026-01-31T15:30:20Z');
  test.each([
    ['+1m', '2026-02', '2026-02-28'],
    ['+13m', '2027-02', '2027-02-28'],
    ['+25m', '2028-02', '2028-02-29'],
    ['+1d', '2026-02-01', '2026-02-01'],
    ['+1w', '2026-W06', '2026-02-08'],
    ['+1y', '2027', '2027-12-31'],
    ['+1h', '2026-01-31T16', '2026-01-31'],
    ['+9h', '2026-02-01T00', '2026-02-01'],
    ['+1min', '2026-01-31T15:31', '2026-01-31'],
    ['+1440min', '2026-02-01T15:30', '2026-02-01'],
  ])('%s from 2026-01-31T15:30:20Z is %s', (text, key, resolvesOn) => {
    const p = parseTargetDate(text, endOfJan);
    expect(p.targetDate).toBe(key);
    expect(p.resolvesOn).toBe(resolvesOn);
  });

  test('month and minute cells roll over the year', () => {
    expect(parseTargetDate('+1m', iso('2026-12-15T00:00:00Z')).targetDate).toBe('2027-01');
    expect(parseTargetDate('+1min', iso('2026-12-31T23:59:30Z')).targetDate).toBe('2027-01-01T00:00');
    expect(parseTargetDate('+1w', iso('2026-12-24T00:00:00Z')).targetDate).toBe('2026-W53');
    expect(parseTargetDate('+2w', iso('2026-12-24T00:00:00Z')).targetDate).toBe('2027-W01');
  });

  test('N bounds', () => {
    expect(validateHorizonEntry('+1min')).toBeNull();
    expect(validateHorizonEntry('+1440min')).toBeNull();
    expect(validateHorizonEntry('+1441min')).toMatch(/between 1 and 1440/);
    expect(validateHorizonEntry('+0min')).toMatch(/between 1 and 1440/);
    expect(validateHorizonEntry('+1000d')).toBeNull();
    expect(validateHorizonEntry('+1001d')).toMatch(/days must be between 1 and 1000/);
    expect(validateHorizonEntry('+1000y')).toBeNull();
    expect(validateHorizonEntry('+0m')).toMatch(/months must be between 1 and 1000/);
    expect(validateHorizonEntry('+01d')).toMatch(/leading zeros/);
  });

  test('a rolling entry past year 9999 is an error', () => {
    expect(() => parseTargetDate('+1000y', iso('9500-01-01T00:00:00Z'))).toThrow(/past year 9999/);
    expect(() => parseTargetDate('+1m', iso('9999-12-01T00:00:00Z'))).toThrow(/past year 9999/);
  });

  test('an invalid now is an error, not a NaN period', () => {
    expect(() => parseTargetDate('+1d', new Date(NaN))).toThrow(HorizonError);
  });

  test('isRolling', () => {
    for (const t of ['+1min', '+1h', '+3d', '+2w', '+1m', '+5y']) expect(isRolling(t)).toBe(true);
    for (const t of ['2026', '2026-11', 'until-settled', '+d', '1d', '+1x', '-1d', ' +1d']) expect(isRolling(t)).toBe(false);
  });
});

// ---------- until-settled, isInside ----------

describe('until-settled and isInside', () => {
  test('until-settled has no clock', () => {
    const p = parseTargetDate('until-settled', NOW);
    expect(p).toEqual({ targetDate: 'until-settled', granularity: 'until-settled', start: null, end: null, resolvesOn: '9999-12-31T00:00:00Z' });
    expect(isRolling('until-settled')).toBe(false);
    expect(isInside(p, iso('1900-01-01T00:00:00Z'))).toBe(true);
    expect(isInside(p, iso('9999-12-31T00:00:00Z'))).toBe(true);
  });

  test('start is inside, end is not', () => {
    const p = parseTargetDate('2026-11', NOW);
    expect(isInside(p, iso('2026-11-01T00:00:00Z'))).toBe(true);
    expect(isInside(p, iso('2026-11-30T23:59:59.999Z'))).toBe(true);
    expect(isInside(p, iso('2026-12-01T00:00:00Z'))).toBe(false);
    expect(isInside(p, iso('2026-10-31T23:59:59.999Z'))).toBe(false);
    expect(isInside(p, new Date(NaN))).toBe(false);
  });
});

// ---------- errors ----------

describe('invalid input', () => {
  test.each([
    ['2026-02-30', /February 2026 has 28 days/],
    ['2028-02-30', /February 2028 has 29 days/],
    ['2026-04-31', /April 2026 has 30 days/],
    ['2026-13', /month must be between 01 and 12/],
    ['2026-00', /month must be between 01 and 12/],
    ['2026-11-00', /day must be between 01 and 30/],
    ['2026-W54', /has 53 weeks/],
    ['2027-W53', /has 52 weeks/],
    ['2026-W00', /week must be between 01 and 53/],
    ['2026-11-21T24', /hour must be between 00 and 23/],
    ['2026-11-21T10:60', /minute must be between 00 and 59/],
    ['0000', /year must be between 0001 and 9999/],
    ['tomorrow', /is not a target date: use YYYY/],
    ['', /is not a target date/],
    ['26-11', /is not a target date/],
    ['2026-1-5', /is not a target date/],
    ['2026-11-21T10:05:00', /is not a target date/],
    ['2026-w48', /is not a target date/],
    [' 2026', /is not a target date/],
    ['Until-Settled', /is not a target date/],
    ['+1.5d', /is not a target date/],
  ])('%s is refused with a sentence', (text, message) => {
    expect(() => parseTargetDate(text, NOW)).toThrow(HorizonError);
    expect(() => parseTargetDate(text, NOW)).toThrow(message);
    const err = validateHorizonEntry(text);
    expect(err).toMatch(message);
    expect(err).toMatch(/\.$/);
  });

  test('non-strings are refused', () => {
    expect(validateHorizonEntry(42 as unknown as string)).toMatch(/must be a string/);
  });

  test('periodContaining refuses an invalid instant', () => {
    expect(() => periodContaining(new Date(NaN), 'day')).toThrow(HorizonError);
  });
});

// ---------- properties against date-fns ----------

describe('properties against a date-fns reference', () => {
  test('periodContaining contains the instant and matches the reference cell', () => {
    fc.assert(
      fc.property(instantArb, granArb, (instant, g) => {
        const p = periodContaining(instant, g);
        expect(isInside(p, instant)).toBe(true);
        expect(p.granularity).toBe(g);
        expect(summary(p)).toEqual(refCell(instant, g));
      }),
      { numRuns: 1000 },
    );
  });

  test('canonical keys round-trip through parseTargetDate', () => {
    fc.assert(
      fc.property(instantArb, granArb, instantArb, (instant, g, now) => {
        const p = periodContaining(instant, g);
        const q = parseTargetDate(p.targetDate, now);
        expect(q.targetDate).toBe(p.targetDate);
        expect(q).toEqual(p);
        expect(validateHorizonEntry(p.targetDate)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  test('resolvesOn is the last day inside the period', () => {
    fc.assert(
      fc.property(instantArb, granArb, (instant, g) => {
        const p = periodContaining(instant, g);
        const day = parseTargetDate(p.resolvesOn, instant);
        // the day overlaps the period and the period ends by the day's end
        expect(day.start!.getTime()).toBeLessThan(p.end!.getTime());
        expect(p.end!.getTime()).toBeLessThanOrEqual(day.end!.getTime());
      }),
      { numRuns: 500 },
    );
  });

  // min/h add real time to the instant; d/w/m/y are calendar arithmetic on the local-noon date.
  const relRef: Record<string, { g: ClockGranularity; max: number; cell: (now: Date, n: number) => ReturnType<typeof refCell> }> = {
    min: { g: 'minute', max: 1440, cell: (now, n) => refCell(addMinutes(now, n), 'minute') },
    h: { g: 'hour', max: 1000, cell: (now, n) => refCell(addHours(now, n), 'hour') },
    d: { g: 'day', max: 1000, cell: (now, n) => refDayCell(addDays(noonOf(now), n), 'day') },
    w: { g: 'week', max: 1000, cell: (now, n) => refDayCell(addWeeks(noonOf(now), n), 'week') },
    m: { g: 'month', max: 1000, cell: (now, n) => refDayCell(addMonths(noonOf(now), n), 'month') },
    y: { g: 'year', max: 1000, cell: (now, n) => refDayCell(addYears(noonOf(now), n), 'year') },
  };

  test('rolling entries land on the reference cell', () => {
    const unitArb = fc.constantFrom(...Object.keys(relRef));
    fc.assert(
      fc.property(instantArb, unitArb, fc.integer({ min: 1, max: 1440 }), (now, unit, raw) => {
        const { g, max, cell } = relRef[unit];
        const n = ((raw - 1) % max) + 1;
        const p = parseTargetDate(`+${n}${unit}`, now);
        expect(isRolling(`+${n}${unit}`)).toBe(true);
        expect(p.granularity).toBe(g);
        expect(summary(p)).toEqual(cell(now, n));
        expect(p.end!.getTime()).toBeGreaterThan(now.getTime());
        expect(isInside(p, now)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  test('53-week years agree with date-fns', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1900, max: 2200 }), (y) => {
        const weeks = getISOWeeksInYear(new Date(y, 5, 15, 12));
        expect(validateHorizonEntry(`${y}-W52`)).toBeNull();
        expect(validateHorizonEntry(`${y}-W53`) === null).toBe(weeks === 53);
      }),
      { numRuns: 301 },
    );
  });

  test('day validity agrees with date-fns', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1900, max: 2200 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }), (y, m, d) => {
        const text = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        expect(validateHorizonEntry(text) === null).toBe(d <= getDaysInMonth(new Date(y, m - 1, 1, 12)));
      }),
      { numRuns: 1000 },
    );
  });
});

// ---------- default horizons ----------

describe('defaultHorizons', () => {
  test('worked example: half-life 1 year, density 2', () => {
    expect(defaultHorizons(NOW, 1, 2)).toEqual(['2026-11', '2027-05', '2027', '2028', '2029']);
    expect(defaultHorizons(NOW, 1)).toEqual(['2026-11', '2027-05', '2027', '2028', '2029']);
  });

  test('other half-lives', () => {
    // t = 1, 2, 3 years
    expect(defaultHorizons(NOW, 1, 1)).toEqual(['2026-11', '2027', '2028', '2029']);
    // t = 1/12 .. 1/2 year: all month cells
    expect(defaultHorizons(NOW, 1 / 6, 2)).toEqual(['2026-11', '2026-12', '2027-01', '2027-02', '2027-03', '2027-04', '2027-05']);
    // one-day half-life: t = 1, 2, 3 days -> two day cells and an ISO week, all before the month ends
    expect(defaultHorizons(NOW, 1 / 365.2425, 1)).toEqual(['2026-11-22', '2026-11-23', '2026-W48', '2026-11']);
  });

  test('points past year 9999 are dropped', () => {
    expect(defaultHorizons(NOW, 5000, 1)).toEqual(['2026-11', '7026']);
  });

  test('bad arguments throw', () => {
    expect(() => defaultHorizons(NOW, 0)).toThrow(HorizonError);
    expect(() => defaultHorizons(NOW, 1, 13)).toThrow(HorizonError);
    expect(() => defaultHorizons(NOW, NaN)).toThrow(HorizonError);
  });

  test('properties: current month included, unique, sorted by end, all in the future, bounded count', () => {
    fc.assert(
      fc.property(
        instantArb,
        fc.double({ min: 0.001, max: 50, noNaN: true }),
        fc.double({ min: 0.1, max: 12, noNaN: true }),
        (now, halfLife, density) => {
          const keys = defaultHorizons(now, halfLife, density);
          expect(keys).toContain(periodContaining(now, 'month').targetDate);
          expect(new Set(keys).size).toBe(keys.length);
          expect(keys.length).toBeLessThanOrEqual(1 + Math.floor(3 * density + 1e-9));
          const periods = keys.map((k) => parseTargetDate(k, now));
          for (const p of periods) expect(p.end!.getTime()).toBeGreaterThan(now.getTime());
          for (let i = 1; i < periods.length; i++) {
            expect(periods[i - 1].end!.getTime()).toBeLessThanOrEqual(periods[i].end!.getTime());
          }
          // the last sample (3 half-lives out) is covered by the last horizon
          const last = new Date(now.getTime() + 3 * halfLife * 365.2425 * 86_400_000);
          if (last.getUTCFullYear() <= 9999 && Math.floor(3 * density + 1e-9) === 3 * density) {
            expect(isInside(periods[periods.length - 1], last)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------- desiredHorizons ----------

describe('desiredHorizons', () => {
  test('disabled or missing preference gives nothing', () => {
    expect(desiredHorizons(NOW, null)).toEqual([]);
    expect(desiredHorizons(NOW, { enabled: false, halfLife: 1, customHorizons: ['2027'] })).toEqual([]);
  });

  test('custom entries plus defaults, deduplicated, sorted, until-settled last, past dropped', () => {
    const got = desiredHorizons(NOW, {
      enabled: true,
      halfLife: 1,
      customHorizons: ['until-settled', '2025', '2026-11-21T11', '+6m', '2027-W10', '+1d', '2026-11-21T12'],
    });
    expect(got.map((h) => [h.entry, h.period.targetDate])).toEqual([
      ['2026-11-21T12', '2026-11-21T12'], // current hour: still open
      ['+1d', '2026-11-22'],
      ['2026-11', '2026-11'],
      ['2027-W10', '2027-W10'],
      ['+6m', '2027-05'], // custom wins the tie with the default 2027-05
      ['2027', '2027'],
      ['2028', '2028'],
      ['2029', '2029'],
      ['until-settled', 'until-settled'],
    ]);
  });

  test('equal ends put the longer period first', () => {
    const got = desiredHorizons(NOW, { enabled: true, halfLife: 1, customHorizons: ['2026-11-30', '2026-W49', '2027-12'] });
    const keys = got.map((h) => h.period.targetDate);
    expect(keys.indexOf('2026-11')).toBeLessThan(keys.indexOf('2026-11-30'));
    expect(keys.indexOf('2027')).toBeLessThan(keys.indexOf('2027-12'));
  });

  test('without a usable halfLife only custom entries are returned; bad stored entries are skipped', () => {
    const got = desiredHorizons(NOW, { enabled: true, customHorizons: ['2027', 'garbage', '2026-02-30'] });
    expect(got.map((h) => h.entry)).toEqual(['2027']);
  });

  test('property: unique targetDates, sorted by end, none already over', () => {
    const entryArb = fc.oneof(
      fc.constant('until-settled'),
      fc.tuple(fc.integer({ min: 1, max: 1000 }), fc.constantFrom('h', 'd', 'w', 'm', 'y')).map(([n, u]) => `+${n}${u}`),
      fc.tuple(instantArb, granArb).map(([i, g]) => periodContaining(i, g).targetDate),
    );
    fc.assert(
      fc.property(instantArb, fc.uniqueArray(entryArb, { maxLength: 24 }), fc.double({ min: 0.01, max: 20, noNaN: true }), (now, custom, halfLife) => {
        const got = desiredHorizons(now, { enabled: true, halfLife, customHorizons: custom });
        const keys = got.map((h) => h.period.targetDate);
        expect(new Set(keys).size).toBe(keys.length);
        for (const h of got) {
          if (h.period.end) expect(h.period.end.getTime()).toBeGreaterThan(now.getTime());
          expect(h.period).toEqual(parseTargetDate(h.entry, now));
        }
        const ends = got.map((h) => (h.period.end ? h.period.end.getTime() : Infinity));
        expect([...ends].sort((a, b) => a - b)).toEqual(ends);
        expect(keys.includes('until-settled')).toBe(custom.includes('until-settled'));
      }),
      { numRuns: 200 },
    );
  });
});

// ---------- validateTimePreference ----------

describe('validateTimePreference', () => {
  const days = (n: number) => Array.from({ length: n }, (_, i) => `+${i + 1}d`);

  test('a full valid preference passes through', () => {
    const tp = {
      enabled: true,
      halfLife: 2,
      density: 3,
      customHorizons: ['2027', '+1m', 'until-settled'],
      horizonCredits: { '2027': { book: 100, proposal: 5 }, 'until-settled': { book: null } },
      horizonTitles: { '+1m': ' Next month ' },
    };
    expect(validateTimePreference(tp)).toEqual({
      ok: true,
      value: { ...tp, horizonTitles: { '+1m': 'Next month' } },
    });
  });

  test('at most 24 entries', () => {
    expect(validateTimePreference({ enabled: true, halfLife: 1, customHorizons: days(24) }).ok).toBe(true);
    const r = validateTimePreference({ enabled: true, halfLife: 1, customHorizons: days(25) });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/at most 24 entries/) });
  });

  test('at most one until-settled, no duplicates', () => {
    expect(validateTimePreference({ enabled: true, halfLife: 1, customHorizons: ['until-settled', '2027', 'until-settled'] })).toEqual({
      ok: false,
      error: expect.stringMatching(/only one until-settled/),
    });
    expect(validateTimePreference({ enabled: true, halfLife: 1, customHorizons: ['2027', '2027'] })).toEqual({
      ok: false,
      error: expect.stringMatching(/'2027' twice/),
    });
  });

  test('invalid entries are refused with the entry error', () => {
    expect(validateTimePreference({ enabled: true, halfLife: 1, customHorizons: ['2026-02-30'] })).toEqual({
      ok: false,
      error: expect.stringMatching(/February 2026 has 28 days/),
    });
    expect(validateTimePreference({ enabled: true, halfLife: 1, customHorizons: [7] }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true, halfLife: 1, customHorizons: '2027' }).ok).toBe(false);
  });

  test('titles: 60 characters allowed, 61 refused, blank dropped, unknown keys dropped', () => {
    const base = { enabled: true, halfLife: 1, customHorizons: ['2027', '2028'] };
    expect(validateTimePreference({ ...base, horizonTitles: { '2027': 'a'.repeat(60) } })).toEqual({
      ok: true,
      value: { ...base, horizonTitles: { '2027': 'a'.repeat(60) } },
    });
    expect(validateTimePreference({ ...base, horizonTitles: { '2027': 'a'.repeat(61) } })).toEqual({
      ok: false,
      error: expect.stringMatching(/61 characters.*limit is 60/),
    });
    expect(validateTimePreference({ ...base, horizonTitles: { '2027': '   ', '2030': 'nope', '2028': 'Two' } })).toEqual({
      ok: true,
      value: { ...base, horizonTitles: { '2028': 'Two' } },
    });
    expect(validateTimePreference({ ...base, horizonTitles: { '2027': 5 } }).ok).toBe(false);
  });

  test('credits: keys naming no entry are dropped, bad values refused', () => {
    const base = { enabled: true, halfLife: 1, customHorizons: ['2027'] };
    expect(validateTimePreference({ ...base, horizonCredits: { '2027': { proposal: 0 }, '2031': { book: 5 }, '+1d': { book: -1 } } })).toEqual({
      ok: true,
      value: { ...base, horizonCredits: { '2027': { proposal: 0 } } },
    });
    for (const bad of [{ book: -1 }, { proposal: null }, { proposal: '3' }, { book: Infinity }, { other: 1 }, 5, null]) {
      const r = validateTimePreference({ ...base, horizonCredits: { '2027': bad } });
      expect(r.ok).toBe(false);
    }
  });

  test('enabled, halfLife and density rules', () => {
    expect(validateTimePreference(null).ok).toBe(false);
    expect(validateTimePreference([]).ok).toBe(false);
    expect(validateTimePreference({ halfLife: 1 })).toEqual({ ok: false, error: expect.stringMatching(/enabled/) });
    expect(validateTimePreference({ enabled: 'yes', halfLife: 1 }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true })).toEqual({ ok: false, error: expect.stringMatching(/halfLife/) });
    expect(validateTimePreference({ enabled: false })).toEqual({ ok: true, value: { enabled: false } });
    expect(validateTimePreference({ enabled: true, halfLife: 0 }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true, halfLife: -1 }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true, halfLife: Infinity }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true, halfLife: 1, density: 12 }).ok).toBe(true);
    expect(validateTimePreference({ enabled: true, halfLife: 1, density: 12.5 }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true, halfLife: 1, density: 0 }).ok).toBe(false);
    expect(validateTimePreference({ enabled: true, halfLife: 1, extra: 1 })).toEqual({ ok: true, value: { enabled: true, halfLife: 1 } });
  });
});
