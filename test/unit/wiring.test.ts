import { assertWired, callback } from '../../src/services/wiring';

describe('the registration point', () => {
  it('refuses to start, naming the callback, until every callback is registered', async () => {
    expect(() => assertWired()).toThrow('Refusing to start: callbacks without a registration: bookResolved');
    expect(() => callback('bookResolved')).toThrow(/no callback registered for "bookResolved"/);
    expect(() => assertWired()).toThrow(/bookResolvedForStats/);
    const { wireAreas } = await import('../../src/services/wireAreas');
    wireAreas();
    expect(() => assertWired()).not.toThrow();
    expect(typeof callback('bookResolved')).toBe('function');
  });
});
