import { Violations } from '../faults/checks';

describe("the fault harness's violations", () => {
  it('pass when none was added, and otherwise fail with the counts and the tail of each first example in the message', () => {
    const v = new Violations();
    expect(() => v.expectNone()).not.toThrow();
    const crashReport = `${'x'.repeat(3000)}\nError: Connection terminated unexpectedly\n    at Client._handleErrorEvent`;
    v.add('service_crash', `worker2 exited on its own (code 1):\n${crashReport}`);
    v.add('service_crash', 'api exited on its own (code 1)');
    v.add('ledger_unbalanced', 'sum 5');
    expect(() => v.expectNone()).toThrow('violations {"service_crash":2,"ledger_unbalanced":1}');
    const message = (() => {
      try {
        v.expectNone();
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(message).toContain('service_crash: ');
    expect(message).toContain('Error: Connection terminated unexpectedly\n    at Client._handleErrorEvent');
    expect(message).not.toContain('x'.repeat(1600)); // an example is cut to its last 1,500 characters
    expect(message).not.toContain('api exited'); // the first example of each check only
    expect(message).toContain('ledger_unbalanced: sum 5');
  });
});
