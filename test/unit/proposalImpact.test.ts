import fc from 'fast-check';
import { headlineImpact, proposalImpact, type BranchBook } from '../../src/domain/proposalImpact';

type Book = BranchBook & { consensus: number | null };

const book = (metricId: string, targetDate: string, branch: Book['branch'], consensus: number | null, at: number): Book => ({
  metricId,
  metricName: metricId.toUpperCase(),
  targetDate,
  resolvesOn: targetDate,
  branch,
  createdAt: new Date(at),
  consensus,
});

describe('proposal impact', () => {
  it('is approved minus declined per metric and date, expected metrics first in the proposer\'s order', () => {
    const books = [
      book('b', '2027', 'approved', 10, 1),
      book('b', '2027', 'declined', 4, 2),
      book('a', '2027', 'declined', 7, 3),
      book('a', '2027', 'approved', 5, 4),
      book('c', '2027', 'approved', null, 5),
      book('c', '2027', 'declined', 1, 6),
      book('a', '2027', null, 99, 7), // a baseline book is not a branch
    ];
    const p = { metricIds: ['a', 'b'], headlineMetricId: 'a', headlineTargetDate: '2027' };
    const out = proposalImpact(p, books, (b) => b.consensus);
    expect(out.map((e) => [e.metricId, e.expected, e.impact])).toEqual([
      ['a', true, -2],
      ['b', true, 6],
      ['c', false, null],
    ]);
    expect(headlineImpact(p, out)).toBe(-2);
  });

  it('the newest book of a branch counts, whatever order the books come in', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ at: fc.integer({ min: 0, max: 1e6 }), c: fc.double({ min: 0, max: 100, noNaN: true }) }), { minLength: 1, maxLength: 8 }), fc.double({ min: 0, max: 100, noNaN: true }), (approvals, declined) => {
        const books = [...approvals.map((x) => book('m', 'd', 'approved', x.c, x.at)), book('m', 'd', 'declined', declined, 0)];
        const newest = [...approvals].sort((x, y) => x.at - y.at).at(-1)!;
        const [e] = proposalImpact({ metricIds: ['m'], headlineMetricId: 'm', headlineTargetDate: 'd' }, books, (b) => b.consensus);
        // Stable sort: among equal instants the last given wins.
        const sameInstant = approvals.filter((x) => x.at === newest.at).at(-1)!;
        expect(e.impact).toBeCloseTo(sameInstant.c - declined, 9);
      }),
    );
  });
});
