import { backoffDelayMs, retryAfterMs, retryDelayMs } from './retry';

const policy = { baseMs: 100, capMs: 1000 };

describe('backoff with jitter', () => {
  it('doubles per retry, up to the cap, with equal jitter', () => {
    expect([1, 2, 3, 4, 5, 6].map((r) => backoffDelayMs(r, policy, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 6].map((r) => backoffDelayMs(r, policy, () => 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelayMs(2, policy, () => 0.5)).toBe(150);
  });

  it('never leaves [exp/2, exp] even with a broken random source', () => {
    expect(backoffDelayMs(1, policy, () => Number.NaN)).toBe(50);
    expect(backoffDelayMs(1, policy, () => 7)).toBe(100);
  });

  it('honours Retry-After when longer, within the cap', () => {
    const headers = new Headers({ 'retry-after': '0.3' });
    expect(retryAfterMs({ headers })).toBe(300);
    expect(retryAfterMs({ headers: { 'retry-after-ms': '250' } })).toBe(250);
    expect(retryAfterMs({ headers: new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }) })).toBeNull();
    expect(retryAfterMs(new Error('x'))).toBeNull();
    expect(retryDelayMs(1, { headers }, policy, () => 0)).toBe(300);
    expect(retryDelayMs(1, { headers: new Headers({ 'retry-after': '60' }) }, policy, () => 0)).toBe(1000);
  });
});
