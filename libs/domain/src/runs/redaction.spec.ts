import { clampChars, MAX_LABEL_CHARS, redactLabel } from './redaction';
import { detailHash } from './detail-hash';

describe('unit: label redaction and clamping (D2)', () => {
  it.each([
    ['contact jane.doe+x@example.co.uk now', 'jane.doe'],
    ['key sk-proj-abcdefghijklmnop1234', 'abcdefghijklmnop1234'],
    ['token ghp_ABCDEFGHIJKLMNOPqrstuvwx12', 'ABCDEFGHIJKLMNOP'],
    ['aws AKIAIOSFODNN7EXAMPLE', 'IOSFODNN7'],
    ['Authorization: Bearer abc.def-ghi_123', 'abc.def'],
    ['card 4111 1111 1111 1111 ok', '4111 1111'],
    ['card 4111-1111-1111-1111', '1111-1111'],
    ['call +44 20 7946 0958', '7946'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sgnatureXYZ123', 'eyJhbGci'],
    ['opaque 0123456789abcdefABCDEF0123456789', '0123456789abcdef'],
  ])('redacts %j', (label, secretPart) => {
    const out = redactLabel(label);
    expect(out).not.toContain(secretPart);
    expect(out).toMatch(/\[(email|key|token|card|phone)\]/);
  });

  it('keeps ordinary scorer labels as they are', () => {
    for (const label of ['match', 'mismatch', 'missing_output', 'below_min', 'invalid_json']) {
      expect(redactLabel(label)).toBe(label);
    }
  });

  it('clamps to 120 characters without splitting a surrogate pair, and removes control characters', () => {
    const long = '😀'.repeat(200);
    const out = redactLabel(long);
    expect(Array.from(out)).toHaveLength(MAX_LABEL_CHARS);
    expect(out.isWellFormed()).toBe(true);
    expect(redactLabel('a\nb\u0000c')).toBe('a b c');
    expect(clampChars('abc', 3)).toBe('abc');
  });
});

describe('unit: keyed detail hash (D2)', () => {
  it('is keyed: the same output under two secrets hashes differently, and it is stable', () => {
    const a = detailHash('k'.repeat(32), 'yes');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(detailHash('k'.repeat(32), 'yes')).toBe(a);
    expect(detailHash('j'.repeat(32), 'yes')).not.toBe(a);
    expect(a).not.toContain('yes');
  });
});
