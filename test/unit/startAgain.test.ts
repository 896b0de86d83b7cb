import fc from 'fast-check';
import { QueryRunnerAlreadyReleasedError } from 'typeorm';
import { mayStartAgain, START_ATTEMPTS, startAgainOnLostConnection, startBackoffMs } from '../../src/boot/startAgain';
import { StartupError } from '../../src/boot/listen';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('which failed starts start again', () => {
  it.each([
    ['a terminated backend (pg_terminate_backend)', pgError('57P01', 'terminating connection due to administrator command')],
    ['a socket that ended mid-query', new Error('Connection terminated unexpectedly')],
    ['the unlock on a runner TypeORM released after its connection died', new QueryRunnerAlreadyReleasedError()],
    ['Postgres still starting', pgError('57P03', 'the database system is starting up')],
    ['Redis dropping the queue connection', new Error('Connection is closed.')],
  ])('%s: yes', (_, err) => expect(mayStartAgain(err)).toBe(true));

  it('a refused connection or an unknown host after a lost connection is the database coming back: yes, from the second attempt on', () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    expect([1, 2, 3].map((a) => mayStartAgain(refused, a))).toEqual([false, true, true]);
    // A failover that moves a DNS name: the name is missing, or the resolver times out, for a moment.
    expect([1, 2].map((a) => mayStartAgain(new Error('getaddrinfo ENOTFOUND db.example'), a))).toEqual([false, true]);
    expect([1, 2].map((a) => mayStartAgain(new Error('getaddrinfo EAI_AGAIN db.example'), a))).toEqual([false, true]);
  });

  it.each([
    ['nothing listens at the database address', new Error('connect ECONNREFUSED 127.0.0.1:5499')],
    ['no such host', new Error('getaddrinfo ENOTFOUND db.example')],
    ['Redis refused', new Error('connect ECONNREFUSED 127.0.0.1:6390')],
    ['an operator mistake', new StartupError('Port 80 is in use: stop what holds it or set PORT.')],
    ['a failed migration', pgError('42P07', 'relation "x" already exists')],
    ['a bug', new TypeError('x is undefined')],
  ])('%s: no, it fails at once', (_, err) => expect(mayStartAgain(err)).toBe(false));

  it('backs off from 0.5 s, doubling, never past 5 s', () => {
    expect([1, 2, 3, 4, 5].map(startBackoffMs)).toEqual([500, 1000, 2000, 4000, 5000]);
    fc.assert(fc.property(fc.integer({ min: 1, max: 60 }), (a) => startBackoffMs(a + 1) >= startBackoffMs(a) && startBackoffMs(a) <= 5000));
  });
});

describe('startAgainOnLostConnection', () => {
  const lost = () => new Error('Connection terminated unexpectedly');

  /** A start failing with the given errors in turn, then returning its attempt number. */
  function run(failures: unknown[], stopping = () => false, undoFails = false, duringWait = () => undefined as void) {
    const log: string[] = [];
    const waits: number[] = [];
    let attempt = 0;
    const result = startAgainOnLostConnection(
      async () => {
        attempt += 1;
        log.push(`start ${attempt}`);
        if (attempt <= failures.length) throw failures[attempt - 1];
        return attempt;
      },
      async () => {
        log.push('undo');
        if (undoFails) throw new Error('undo failed');
      },
      { onRetry: (_e, a, w) => log.push(`retry after ${a} in ${w}`), stopping, sleep: async (ms) => {
          waits.push(ms);
          duringWait();
        },
      },
    );
    return { result, log, waits };
  }

  it('undoes each lost start, waits, and returns what the first whole start returns', async () => {
    const r = run([lost(), lost()]);
    await expect(r.result).resolves.toBe(3);
    expect(r.log).toEqual(['start 1', 'retry after 1 in 500', 'undo', 'start 2', 'retry after 2 in 1000', 'undo', 'start 3']);
    expect(r.waits).toEqual([500, 1000]);
  });

  it('gives up after START_ATTEMPTS starts, with the last error', async () => {
    const errors = Array.from({ length: START_ATTEMPTS }, (_, i) => pgError('57P01', `lost ${i + 1}`));
    const r = run(errors);
    await expect(r.result).rejects.toThrow(`lost ${START_ATTEMPTS}`);
    expect(r.log.filter((l) => l.startsWith('start'))).toHaveLength(START_ATTEMPTS);
    expect(r.log.filter((l) => l === 'undo')).toHaveLength(START_ATTEMPTS - 1);
  });

  it('fails at once on anything but a lost connection, and when the process is being stopped', async () => {
    const refused = run([new Error('connect ECONNREFUSED 127.0.0.1:5499')]);
    await expect(refused.result).rejects.toThrow('ECONNREFUSED');
    expect(refused.log).toEqual(['start 1']);
    const stopped = run([lost()], () => true);
    await expect(stopped.result).rejects.toThrow('Connection terminated');
    expect(stopped.log).toEqual(['start 1']);
  });

  it('a refusal once a connection was lost starts again', async () => {
    const r = run([lost(), new Error('connect ECONNREFUSED 127.0.0.1:5432')]);
    await expect(r.result).resolves.toBe(3);
  });

  it('a signal during the wait ends the attempts with the last error, before another start', async () => {
    let signalled = false;
    const r = run([lost()], () => signalled, false, () => (signalled = true));
    await expect(r.result).rejects.toThrow('Connection terminated');
    expect(r.log).toEqual(['start 1', 'retry after 1 in 500', 'undo']);
  });

  it("an undo that fails does not hide the start's error or stop the next attempt", async () => {
    const r = run([lost()], () => false, true);
    await expect(r.result).resolves.toBe(2);
    expect(r.log).toEqual(['start 1', 'retry after 1 in 500', 'undo', 'start 2']);
  });
});
