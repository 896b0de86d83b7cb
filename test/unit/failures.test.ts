import { QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isConnectionLoss, isSerializationFailure, isTransient } from '../../src/failures';
import { ApiError, DomainError } from '../../src/errors';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const wrapped = (code: string) => Object.assign(new Error('query failed'), { driverError: { code } });

describe('infrastructure failures', () => {
  it.each([
    ['admin shutdown (pg_terminate_backend)', pgError('57P01')],
    ['connection failure', pgError('08006')],
    ['cannot connect now', wrapped('57P03')],
    ['too many connections', pgError('53300')],
    ['a socket that ended', new Error('Connection terminated unexpectedly')],
    ['a refused connection', new Error('connect ECONNREFUSED 127.0.0.1:5432')],
    ['a query runner TypeORM released after its connection died', new QueryRunnerProviderAlreadyReleasedError()],
  ])('%s is a lost connection', (_, err) => {
    expect(isConnectionLoss(err)).toBe(true);
    expect(isTransient(err)).toBe(true);
  });

  it('serialization failures and deadlocks are transient but not lost connections', () => {
    for (const err of [pgError('40001'), wrapped('40P01')]) {
      expect(isSerializationFailure(err)).toBe(true);
      expect(isConnectionLoss(err)).toBe(false);
      expect(isTransient(err)).toBe(true);
    }
  });

  it('refusals and bugs are not transient', () => {
    for (const err of [pgError('23505'), wrapped('22P02'), new TypeError('x is undefined'), 'a string', undefined]) {
      expect(isTransient(err)).toBe(false);
    }
  });
});

describe('refusals', () => {
  it('take no stack trace (an answer, not a fault); a 5xx keeps its stack, and the limit is put back', () => {
    const before = Error.stackTraceLimit;
    const refusal = new ApiError('validation_failed', 'The amount must be positive.');
    expect(refusal).toBeInstanceOf(Error);
    expect(refusal.stack).toMatch(/The amount must be positive\.$/);
    expect(new DomainError('insufficient_balance', 'Not enough credits.').stack).not.toMatch(/\n\s+at /);
    expect(new DomainError('internal_error', 'A bug.').stack).toMatch(/\n\s+at /);
    expect(new DomainError('trade_pending', 'Still applying.').stack).toMatch(/\n\s+at /); // a 503, logged with its stack
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('plain').stack).toMatch(/\n\s+at /);
  });
});
