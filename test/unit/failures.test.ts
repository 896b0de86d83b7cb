import { QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isConnectionLoss, isSerializationFailure, isTransient } from '../../src/failures';

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
