import { createHmac } from 'node:crypto';
import { detailHash, detailKeyId } from './detail-hash';

// The hash as it was computed before the key was cached: evidence stored then must compare equal now.
const reference = (secret: string, output: string) => createHmac('sha256', secret).update(output, 'utf8').digest('hex');

describe('unit: detail hash with a cached key (D2)', () => {
  it('is byte-for-byte HMAC-SHA256 with the secret as UTF-8, for short, long (> one block) and non-ASCII keys and outputs', () => {
    const secrets = ['s'.repeat(32), `key-${'x'.repeat(100)}`, 'clé-ünïcödé-🔑-0123456789abcdef0123'];
    const outputs = ['', 'yes', 'é🙂\u0000\n', '{"a":1}'.repeat(5_000), '\ud800 lone surrogate'];
    for (const secret of secrets) for (const output of outputs) expect(detailHash(secret, output)).toBe(reference(secret, output));
  });

  it('keeps each secret apart, also past the cache bound', () => {
    const secrets = Array.from({ length: 20 }, (_, i) => `secret-${i}-0123456789abcdef0123456789`);
    for (let round = 0; round < 2; round++) for (const s of secrets) expect(detailHash(s, 'yes')).toBe(reference(s, 'yes'));
  });

  it('names a key by a short keyed id: stable, different per key, never the key itself', () => {
    const a = 'a'.repeat(32);
    expect(detailKeyId(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(detailKeyId(a)).toBe(detailKeyId(a));
    expect(detailKeyId(a)).not.toBe(detailKeyId('b'.repeat(32)));
    expect(detailKeyId(a)).toBe(reference(a, 'evals detail-hash key id').slice(0, 16));
  });
});
