import fc from 'fast-check';
import { closeAll, type CloseStep } from '../../src/closeAll';

/** closeAll: every part is closed whatever fails, steps in order, a group at once; the first failure is thrown. */
describe('closeAll', () => {
  it('runs every step in order whatever fails, and throws the first failure in step and group order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.record({ fails: fc.boolean(), async: fc.boolean() }), { minLength: 1, maxLength: 4 }), { maxLength: 6 }), async (plan) => {
        const log: string[] = [];
        const steps: CloseStep[] = plan.map((group, g) => {
          const parts = group.map((p, i) => () => {
            const name = `${g}.${i}`;
            const end = () => {
              log.push(name);
              if (p.fails) throw new Error(name);
            };
            return p.async ? new Promise<void>((res, rej) => setTimeout(() => { try { end(); res(); } catch (e) { rej(e); } }, (group.length - i) * 2)) : end();
          });
          return parts.length === 1 ? parts[0] : parts;
        });
        const expected = plan.flatMap((group, g) => group.flatMap((p, i) => (p.fails ? [`${g}.${i}`] : [])))[0];
        const err = await closeAll(steps).then(() => undefined, (e: Error) => e);
        expect(err?.message).toBe(expected);
        // Every part ran, and no part of a group ran before every part of the groups before it.
        expect([...log].sort()).toEqual(plan.flatMap((group, g) => group.map((_, i) => `${g}.${i}`)).sort());
        const groupOf = log.map((n) => Number(n.split('.')[0]));
        expect(groupOf).toEqual([...groupOf].sort((a, b) => a - b));
      }),
      { numRuns: 100 },
    );
  });

  it("a group's parts run at once: the slow one does not hold the others back", async () => {
    const log: string[] = [];
    const slow = () => new Promise<void>((res) => setTimeout(() => res(void log.push('slow')), 30));
    const quick = () => void log.push('quick');
    await closeAll([[slow, quick], () => void log.push('next')]);
    expect(log).toEqual(['quick', 'slow', 'next']);
  });
});
