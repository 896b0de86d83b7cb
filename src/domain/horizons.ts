// Target-date grammar and horizon selection for markets.
// Pure: no I/O, no dependencies, every computation in UTC, and `now` is always passed in.

export type Granularity = 'year' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'until-settled';
export type ClockGranularity = Exclude<Granularity, 'until-settled'>;

export interface Period {
  targetDate: string; // canonical absolute key, or 'until-settled'
  granularity: Granularity;
  start: Date | null; // inclusive; null for until-settled
  end: Date | null; // exclusive (the resolution instant); null for until-settled
  resolvesOn: string; // YYYY-MM-DD of the last day inside the period
}

export class HorizonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HorizonError';
  }
}

export const UNTIL_SETTLED = 'until-settled';
export const UNTIL_SETTLED_RESOLVES_ON = '9999-12-31T00:00:00Z';
export const MAX_CUSTOM_HORIZONS = 24;
export const MAX_TITLE_LENGTH = 60;
export const MAX_DENSITY = 12;
export const DEFAULT_DENSITY = 2;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
// Mean Gregorian year: lets fractional half-lives map to instants without calendar rounding.
const YEAR_MS = 365.2425 * DAY_MS;

// Four-digit keys only; 0001-01-01 is a Monday, so ISO weeks need no special case at the low end.
const MIN_YEAR = 1;
const MAX_YEAR = 9999;

type RelativeUnit = 'min' | 'h' | 'd' | 'w' | 'm' | 'y';
const RELATIVE_RE = /^\+(\d+)(min|h|d|w|m|y)$/;
const RELATIVE_MAX: Record<RelativeUnit, number> = { min: 1440, h: 1000, d: 1000, w: 1000, m: 1000, y: 1000 };
const UNIT_NAMES: Record<RelativeUnit, string> = { min: 'minutes', h: 'hours', d: 'days', w: 'weeks', m: 'months', y: 'years' };

const MONTH_NAMES = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];

const GRAMMAR_HINT =
  'use YYYY, YYYY-MM, YYYY-Www, YYYY-MM-DD, YYYY-MM-DDTHH, YYYY-MM-DDTHH:MM, +N followed by min, h, d, w, m or y, or until-settled';

// ---------- calendar helpers (UTC) ----------

// Date.UTC maps years 0..99 to 1900..1999, so go through setUTCFullYear.
function utc(year: number, month0: number, day = 1, hour = 0, minute = 0): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month0, day);
  d.setUTCHours(hour, minute, 0, 0);
  return d;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, month0: number): number {
  return [31, isLeapYear(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month0];
}

function dayKey(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

// Monday 00:00 UTC of ISO week 1: the week containing 4 January.
function isoWeekOneStart(isoYear: number): Date {
  const jan4 = utc(isoYear, 0, 4);
  const mondayIndex = (jan4.getUTCDay() + 6) % 7; // 0 = Monday
  return new Date(jan4.getTime() - mondayIndex * DAY_MS);
}

export function isoWeeksInYear(isoYear: number): number {
  return Math.round((isoWeekOneStart(isoYear + 1).getTime() - isoWeekOneStart(isoYear).getTime()) / WEEK_MS);
}

function makePeriod(targetDate: string, granularity: ClockGranularity, start: Date, end: Date): Period {
  return { targetDate, granularity, start, end, resolvesOn: dayKey(new Date(end.getTime() - 1)) };
}

function yearPeriod(y: number): Period {
  return makePeriod(pad(y, 4), 'year', utc(y, 0), utc(y + 1, 0));
}

function monthPeriod(y: number, month0: number): Period {
  return makePeriod(`${pad(y, 4)}-${pad(month0 + 1)}`, 'month', utc(y, month0), utc(y, month0 + 1));
}

function weekPeriod(isoYear: number, week: number): Period {
  const start = new Date(isoWeekOneStart(isoYear).getTime() + (week - 1) * WEEK_MS);
  return makePeriod(`${pad(isoYear, 4)}-W${pad(week)}`, 'week', start, new Date(start.getTime() + WEEK_MS));
}

function dayPeriod(y: number, month0: number, day: number): Period {
  const start = utc(y, month0, day);
  return makePeriod(dayKey(start), 'day', start, new Date(start.getTime() + DAY_MS));
}

function hourPeriod(y: number, month0: number, day: number, hour: number): Period {
  const start = utc(y, month0, day, hour);
  return makePeriod(`${dayKey(start)}T${pad(hour)}`, 'hour', start, new Date(start.getTime() + HOUR_MS));
}

function minutePeriod(y: number, month0: number, day: number, hour: number, minute: number): Period {
  const start = utc(y, month0, day, hour, minute);
  return makePeriod(`${dayKey(start)}T${pad(hour)}:${pad(minute)}`, 'minute', start, new Date(start.getTime() + MINUTE_MS));
}

function untilSettledPeriod(): Period {
  return { targetDate: UNTIL_SETTLED, granularity: UNTIL_SETTLED, start: null, end: null, resolvesOn: UNTIL_SETTLED_RESOLVES_ON };
}

function assertInstant(instant: Date, what: string): void {
  if (!(instant instanceof Date) || Number.isNaN(instant.getTime())) {
    throw new HorizonError(`The ${what} is not a valid date.`);
  }
  const y = instant.getUTCFullYear();
  if (y < MIN_YEAR || y > MAX_YEAR) {
    throw new HorizonError(`The ${what} ${instant.toISOString()} is outside the supported years 0001 to 9999.`);
  }
}

// ---------- public API ----------

/** The cell of granularity g containing instant (cells are half-open [start, end), UTC). */
export function periodContaining(instant: Date, g: ClockGranularity): Period {
  assertInstant(instant, 'instant');
  const y = instant.getUTCFullYear();
  const m = instant.getUTCMonth();
  const d = instant.getUTCDate();
  switch (g) {
    case 'year':
      return yearPeriod(y);
    case 'month':
      return monthPeriod(y, m);
    case 'week': {
      const dayStart = utc(y, m, d).getTime();
      const monday = new Date(dayStart - ((instant.getUTCDay() + 6) % 7) * DAY_MS);
      // The ISO year is the calendar year of the week's Thursday.
      const isoYear = new Date(monday.getTime() + 3 * DAY_MS).getUTCFullYear();
      if (isoYear > MAX_YEAR) {
        throw new HorizonError(`The instant ${instant.toISOString()} falls in an ISO week after year 9999.`);
      }
      const week = Math.round((monday.getTime() - isoWeekOneStart(isoYear).getTime()) / WEEK_MS) + 1;
      return weekPeriod(isoYear, week);
    }
    case 'day':
      return dayPeriod(y, m, d);
    case 'hour':
      return hourPeriod(y, m, d, instant.getUTCHours());
    case 'minute':
      return minutePeriod(y, m, d, instant.getUTCHours(), instant.getUTCMinutes());
    default:
      throw new HorizonError(`Unknown granularity '${String(g)}'.`);
  }
}

/** start <= instant < end; until-settled has no clock, so every instant is inside it. */
export function isInside(p: Period, instant: Date): boolean {
  const t = instant.getTime();
  if (Number.isNaN(t)) return false;
  if (p.start && t < p.start.getTime()) return false;
  if (p.end && t >= p.end.getTime()) return false;
  return true;
}

/** True for text shaped like a rolling entry (+N followed by a unit); range checks are validateHorizonEntry's job. */
export function isRolling(text: string): boolean {
  return typeof text === 'string' && RELATIVE_RE.test(text);
}

type Entry =
  | { kind: 'absolute'; period: Period }
  | { kind: 'relative'; n: number; unit: RelativeUnit }
  | { kind: 'until-settled' };

function num(s: string): number {
  return Number.parseInt(s, 10);
}

function checkYear(text: string, y: number): void {
  if (y < MIN_YEAR) throw new HorizonError(`'${text}' is not a valid target date: the year must be between 0001 and 9999.`);
}

function checkMonth(text: string, mo: number): void {
  if (mo < 1 || mo > 12) throw new HorizonError(`'${text}' is not a valid target date: the month must be between 01 and 12.`);
}

function checkDay(text: string, y: number, mo: number, day: number): void {
  const max = daysInMonth(y, mo - 1);
  if (day < 1 || day > max) {
    throw new HorizonError(
      `'${text}' is not a valid target date: ${MONTH_NAMES[mo - 1]} ${pad(y, 4)} has ${max} days, so the day must be between 01 and ${max}.`,
    );
  }
}

function checkHour(text: string, h: number): void {
  if (h > 23) throw new HorizonError(`'${text}' is not a valid target date: the hour must be between 00 and 23.`);
}

function parseEntry(text: string): Entry {
  if (typeof text !== 'string') throw new HorizonError('A target date must be a string.');
  if (text === UNTIL_SETTLED) return { kind: 'until-settled' };

  const rel = RELATIVE_RE.exec(text);
  if (rel) {
    const unit = rel[2] as RelativeUnit;
    const max = RELATIVE_MAX[unit];
    if (rel[1].length > 1 && rel[1].startsWith('0')) {
      throw new HorizonError(`'${text}' is not a valid rolling horizon: write N without leading zeros.`);
    }
    const n = num(rel[1]);
    if (n < 1 || n > max) {
      throw new HorizonError(`'${text}' is not a valid rolling horizon: the number of ${UNIT_NAMES[unit]} must be between 1 and ${max}.`);
    }
    return { kind: 'relative', n, unit };
  }

  let mt: RegExpExecArray | null;
  if ((mt = /^(\d{4})$/.exec(text))) {
    const y = num(mt[1]);
    checkYear(text, y);
    return { kind: 'absolute', period: yearPeriod(y) };
  }
  if ((mt = /^(\d{4})-(\d{2})$/.exec(text))) {
    const y = num(mt[1]);
    const mo = num(mt[2]);
    checkYear(text, y);
    checkMonth(text, mo);
    return { kind: 'absolute', period: monthPeriod(y, mo - 1) };
  }
  if ((mt = /^(\d{4})-W(\d{2})$/.exec(text))) {
    const y = num(mt[1]);
    const w = num(mt[2]);
    checkYear(text, y);
    const weeks = isoWeeksInYear(y);
    if (w < 1 || w > weeks) {
      throw new HorizonError(`'${text}' is not a valid target date: ISO year ${pad(y, 4)} has ${weeks} weeks, so the week must be between 01 and ${weeks}.`);
    }
    return { kind: 'absolute', period: weekPeriod(y, w) };
  }
  if ((mt = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2})(?::(\d{2}))?)?$/.exec(text))) {
    const y = num(mt[1]);
    const mo = num(mt[2]);
    const day = num(mt[3]);
    checkYear(text, y);
    checkMonth(text, mo);
    checkDay(text, y, mo, day);
    if (mt[4] === undefined) return { kind: 'absolute', period: dayPeriod(y, mo - 1, day) };
    const h = num(mt[4]);
    checkHour(text, h);
    if (mt[5] === undefined) return { kind: 'absolute', period: hourPeriod(y, mo - 1, day, h) };
    const mi = num(mt[5]);
    if (mi > 59) throw new HorizonError(`'${text}' is not a valid target date: the minute must be between 00 and 59.`);
    return { kind: 'absolute', period: minutePeriod(y, mo - 1, day, h, mi) };
  }
  throw new HorizonError(`'${text}' is not a target date: ${GRAMMAR_HINT}.`);
}

// Rolling cells are "the cell N units after the current one"; UTC has no DST, so fixed-length units are plain ms offsets.
function resolveRelative(text: string, n: number, unit: RelativeUnit, now: Date): Period {
  assertInstant(now, 'current time');
  const t = now.getTime();
  const wrap = (f: () => Period): Period => {
    try {
      return f();
    } catch (e) {
      if (e instanceof HorizonError) throw new HorizonError(`'${text}' resolves past year 9999.`);
      throw e;
    }
  };
  switch (unit) {
    case 'min':
      return wrap(() => periodContaining(new Date(t + n * MINUTE_MS), 'minute'));
    case 'h':
      return wrap(() => periodContaining(new Date(t + n * HOUR_MS), 'hour'));
    case 'd':
      return wrap(() => periodContaining(new Date(t + n * DAY_MS), 'day'));
    case 'w':
      return wrap(() => periodContaining(new Date(t + n * WEEK_MS), 'week'));
    case 'm': {
      const total = now.getUTCFullYear() * 12 + now.getUTCMonth() + n;
      const y = Math.floor(total / 12);
      if (y > MAX_YEAR) throw new HorizonError(`'${text}' resolves past year 9999.`);
      return monthPeriod(y, total % 12);
    }
    case 'y': {
      const y = now.getUTCFullYear() + n;
      if (y > MAX_YEAR) throw new HorizonError(`'${text}' resolves past year 9999.`);
      return yearPeriod(y);
    }
  }
}

/** Absolute, rolling (resolved against now) or until-settled; throws HorizonError with a sentence. */
export function parseTargetDate(text: string, now: Date): Period {
  const entry = parseEntry(text);
  switch (entry.kind) {
    case 'until-settled':
      return untilSettledPeriod();
    case 'absolute':
      return entry.period;
    case 'relative':
      return resolveRelative(text, entry.n, entry.unit, now);
  }
}

/** null if text is a valid customHorizons entry, else an error sentence. Past absolute dates are valid here (no clock). */
export function validateHorizonEntry(text: string): string | null {
  try {
    parseEntry(text);
    return null;
  } catch (e) {
    if (e instanceof HorizonError) return e.message;
    throw e;
  }
}

// ---------- time preference ----------

export interface HorizonCredit {
  book?: number | null;
  proposal?: number;
}

export interface TimePreference {
  enabled: boolean;
  halfLife?: number;
  density?: number;
  customHorizons?: string[];
  horizonCredits?: Record<string, HorizonCredit>;
  horizonTitles?: Record<string, string>;
}

export interface DesiredHorizon {
  entry: string; // the customHorizons text, or the canonical key for a default horizon
  period: Period;
}

function byEnd(a: Period, b: Period): number {
  // until-settled (end null) sorts last; equal ends put the longer period first, then the key, for a stable order.
  const ae = a.end ? a.end.getTime() : Infinity;
  const be = b.end ? b.end.getTime() : Infinity;
  if (ae !== be) return ae - be;
  const as = a.start ? a.start.getTime() : Infinity;
  const bs = b.start ? b.start.getTime() : Infinity;
  if (as !== bs) return as - bs;
  return a.targetDate < b.targetDate ? -1 : a.targetDate > b.targetDate ? 1 : 0;
}

function defaultPeriods(now: Date, halfLifeYears: number, density: number): Period[] {
  assertInstant(now, 'current time');
  if (!Number.isFinite(halfLifeYears) || halfLifeYears <= 0) {
    throw new HorizonError('The half-life must be a positive number of years.');
  }
  if (!Number.isFinite(density) || density <= 0 || density > MAX_DENSITY) {
    throw new HorizonError(`The density must be a number greater than 0 and at most ${MAX_DENSITY}.`);
  }
  const out = new Map<string, Period>();
  const current = periodContaining(now, 'month');
  out.set(current.targetDate, current);
  // The epsilon keeps density*3 from losing a point to float error (e.g. 0.7 * 3 = 2.0999…).
  const points = Math.floor(density * 3 + 1e-9);
  for (let i = 1; i <= points; i++) {
    const tYears = (halfLifeYears * i) / density;
    const instant = new Date(now.getTime() + tYears * YEAR_MS);
    if (Number.isNaN(instant.getTime()) || instant.getUTCFullYear() > MAX_YEAR) break; // later points are further out
    const g: ClockGranularity =
      tYears <= 2 / 365.2425 ? 'day' : tYears <= 21 / 365.2425 ? 'week' : tYears <= 0.5 ? 'month' : 'year';
    let p: Period;
    try {
      p = periodContaining(instant, g);
    } catch {
      break; // only the ISO week straddling 9999/10000 can land here
    }
    if (!out.has(p.targetDate)) out.set(p.targetDate, p);
  }
  return [...out.values()].sort(byEnd);
}

/**
 * Default horizons: canonical keys of calendar cells sampled along the weight w(t) = 2^(-t/halfLife), t in years.
 *
 * - density points per half-life (default 2) over 3 half-lives: t_i = halfLife * i / density, i = 1..floor(3 * density);
 *   the weight falls to 1/8 by the last point, so further markets would carry little weight.
 * - t_i is added to now in mean Gregorian years (365.2425 days) and mapped to the coarsest sensible cell containing
 *   that instant: t <= 2 days -> day, t <= 3 weeks -> ISO week, t <= 6 months (0.5 y) -> month, else year.
 *   The bounds are inclusive so that half a year out still gets a month (see the example).
 * - The current month's cell is always included (the nearest monthly book).
 * - Deduplicated by key and sorted by end, so the current month comes first unless a very short half-life adds
 *   day or week cells that end before it. Points beyond year 9999 are dropped.
 *
 * Example: now = 2026-11-21T12:00Z, halfLife 1, density 2 -> t = 0.5, 1, 1.5, 2, 2.5, 3 years
 *   -> cells 2027-05, 2027, 2028, 2028, 2029, 2029 -> ['2026-11', '2027-05', '2027', '2028', '2029'].
 */
export function defaultHorizons(now: Date, halfLifeYears: number, density: number = DEFAULT_DENSITY): string[] {
  return defaultPeriods(now, halfLifeYears, density).map((p) => p.targetDate);
}

/**
 * The horizons a workspace wants at `now`: custom entries first (so their entry text, which keys credits and titles,
 * wins a tie on targetDate), then defaults; deduplicated by targetDate and sorted by end with until-settled last.
 * Absolute entries whose period has ended are dropped. Entries that do not parse are skipped: validateTimePreference
 * refuses them on write, and one bad stored entry should not stop the others.
 */
export function desiredHorizons(now: Date, tp: TimePreference | null): DesiredHorizon[] {
  if (!tp || tp.enabled !== true) return [];
  assertInstant(now, 'current time');
  const byKey = new Map<string, DesiredHorizon>();
  for (const entry of tp.customHorizons ?? []) {
    let period: Period;
    try {
      period = parseTargetDate(entry, now);
    } catch (e) {
      if (e instanceof HorizonError) continue;
      throw e;
    }
    if (period.end && period.end.getTime() <= now.getTime()) continue;
    if (!byKey.has(period.targetDate)) byKey.set(period.targetDate, { entry, period });
  }
  const halfLife = tp.halfLife;
  if (typeof halfLife === 'number' && Number.isFinite(halfLife) && halfLife > 0) {
    const d = tp.density;
    const density = typeof d === 'number' && Number.isFinite(d) && d > 0 && d <= MAX_DENSITY ? d : DEFAULT_DENSITY;
    for (const period of defaultPeriods(now, halfLife, density)) {
      if (!byKey.has(period.targetDate)) byKey.set(period.targetDate, { entry: period.targetDate, period });
    }
  }
  return [...byKey.values()].sort((a, b) => byEnd(a.period, b.period));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonNegative(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/**
 * Validates and normalises a stored/submitted time preference. Unknown top-level fields are dropped;
 * credit and title keys that name no customHorizons entry are dropped (entries get edited; stale keys are harmless).
 */
export function validateTimePreference(tp: unknown): { ok: true; value: TimePreference } | { ok: false; error: string } {
  const fail = (error: string) => ({ ok: false as const, error });
  if (!isPlainObject(tp)) return fail('The time preference must be an object.');
  if (typeof tp.enabled !== 'boolean') return fail('The time preference needs enabled set to true or false.');
  const value: TimePreference = { enabled: tp.enabled };

  if (tp.halfLife === undefined) {
    if (tp.enabled) return fail('An enabled time preference needs a halfLife in years.');
  } else if (typeof tp.halfLife !== 'number' || !Number.isFinite(tp.halfLife) || tp.halfLife <= 0) {
    return fail('halfLife must be a number of years greater than 0.');
  } else {
    value.halfLife = tp.halfLife;
  }

  if (tp.density !== undefined) {
    if (typeof tp.density !== 'number' || !Number.isFinite(tp.density) || tp.density <= 0 || tp.density > MAX_DENSITY) {
      return fail(`density must be a number greater than 0 and at most ${MAX_DENSITY}.`);
    }
    value.density = tp.density;
  }

  const entries: string[] = [];
  if (tp.customHorizons !== undefined) {
    if (!Array.isArray(tp.customHorizons)) return fail('customHorizons must be a list of target dates.');
    if (tp.customHorizons.length > MAX_CUSTOM_HORIZONS) {
      return fail(`customHorizons can hold at most ${MAX_CUSTOM_HORIZONS} entries; it has ${tp.customHorizons.length}.`);
    }
    for (const e of tp.customHorizons) {
      if (typeof e !== 'string') return fail('Every customHorizons entry must be a string.');
      const err = validateHorizonEntry(e);
      if (err) return fail(err);
      if (e === UNTIL_SETTLED && entries.includes(UNTIL_SETTLED)) return fail('customHorizons can hold only one until-settled entry.');
      if (entries.includes(e)) return fail(`customHorizons lists '${e}' twice.`);
      entries.push(e);
    }
    value.customHorizons = entries;
  }
  const known = new Set(entries);

  if (tp.horizonCredits !== undefined) {
    if (!isPlainObject(tp.horizonCredits)) return fail('horizonCredits must be an object keyed by customHorizons entry.');
    const credits: Record<string, HorizonCredit> = {};
    for (const [key, raw] of Object.entries(tp.horizonCredits)) {
      if (!known.has(key)) continue;
      if (!isPlainObject(raw)) return fail(`horizonCredits for '${key}' must be an object with book and/or proposal.`);
      const extra = Object.keys(raw).filter((k) => k !== 'book' && k !== 'proposal');
      if (extra.length > 0) return fail(`horizonCredits for '${key}' has unknown field '${extra[0]}'; only book and proposal are allowed.`);
      const credit: HorizonCredit = {};
      if (raw.book !== undefined) {
        if (raw.book !== null && !isNonNegative(raw.book)) return fail(`horizonCredits book for '${key}' must be a number of at least 0, or null.`);
        credit.book = raw.book;
      }
      if (raw.proposal !== undefined) {
        if (!isNonNegative(raw.proposal)) return fail(`horizonCredits proposal for '${key}' must be a number of at least 0.`);
        credit.proposal = raw.proposal;
      }
      credits[key] = credit;
    }
    value.horizonCredits = credits;
  }

  if (tp.horizonTitles !== undefined) {
    if (!isPlainObject(tp.horizonTitles)) return fail('horizonTitles must be an object keyed by customHorizons entry.');
    const titles: Record<string, string> = {};
    for (const [key, raw] of Object.entries(tp.horizonTitles)) {
      if (!known.has(key)) continue;
      if (typeof raw !== 'string') return fail(`The title for '${key}' must be a string.`);
      const title = raw.trim();
      if (title === '') continue;
      const length = [...title].length; // code points, so an emoji counts once
      if (length > MAX_TITLE_LENGTH) {
        return fail(`The title for '${key}' is ${length} characters long; the limit is ${MAX_TITLE_LENGTH}.`);
      }
      titles[key] = title;
    }
    value.horizonTitles = titles;
  }

  return { ok: true, value };
}
