import { decideResolution } from '../../src/domain/resolution';

const end = new Date('2026-11-30T00:00:00Z');
const book = { periodEnd: end };
const at = (ms: number) => new Date(end.getTime() + ms);
const DAY = 86_400_000;
const measured = { resolvesNaUntilMeasured: false, settlementLagMinutes: null, measuredAt: new Date('2026-01-01T00:00:00Z') };

describe('decideResolution', () => {
  it('resolves on a reading inside the period', () => {
    expect(decideResolution(book, measured, { value: 42, na: false }, at(1))).toEqual({ action: 'resolve', value: 42 });
  });
  it('voids on an N/A reading (na or null value)', () => {
    expect(decideResolution(book, measured, { value: null, na: true }, at(1))).toMatchObject({ action: 'void', code: 'na_reading' });
    expect(decideResolution(book, measured, { value: null, na: false }, at(1))).toMatchObject({ action: 'void', code: 'na_reading' });
  });
  it('skips a negative value', () => {
    expect(decideResolution(book, measured, { value: -1, na: false }, at(1))).toEqual({ action: 'skip' });
  });
  it('waits for a reading until the lag passes, never less than a day', () => {
    expect(decideResolution(book, measured, undefined, at(DAY - 1))).toEqual({ action: 'wait' });
    expect(decideResolution(book, measured, undefined, at(DAY))).toMatchObject({ action: 'void', code: 'settlement_lag' });
    const shortLag = { ...measured, settlementLagMinutes: 5 };
    expect(decideResolution(book, shortLag, undefined, at(DAY - 1))).toEqual({ action: 'wait' });
    const longLag = { ...measured, settlementLagMinutes: 3 * 24 * 60 };
    expect(decideResolution(book, longLag, undefined, at(2 * DAY))).toEqual({ action: 'wait' });
    expect(decideResolution(book, longLag, undefined, at(3 * DAY))).toMatchObject({ action: 'void', code: 'settlement_lag' });
  });
  it('voids at once while a resolvesNaUntilMeasured metric has no reading at or before the end', () => {
    const unmeasured = { resolvesNaUntilMeasured: true, settlementLagMinutes: null, measuredAt: null };
    expect(decideResolution(book, unmeasured, undefined, at(1))).toMatchObject({ action: 'void', code: 'unmeasured' });
    const measuredLater = { ...unmeasured, measuredAt: at(5) };
    expect(decideResolution(book, measuredLater, undefined, at(10))).toMatchObject({ action: 'void', code: 'unmeasured' });
    const measuredBefore = { ...unmeasured, measuredAt: at(-5) };
    expect(decideResolution(book, measuredBefore, undefined, at(10))).toEqual({ action: 'wait' });
  });
});
