import { API_KEY_NAME_PATTERN, apiKeyHashesEqual, generateApiKey, hashApiKeySecret, isApiKeyId, isApiKeyTier, parseApiKey } from './api-key.repository';

describe('API keys: format, hashing and comparison (docs/security.md)', () => {
  it('generates evk_<16 hex id>_<43 base64url secret> keys that parse back, with a non-secret prefix', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = generateApiKey();
      expect(k.key).toMatch(/^evk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(parseApiKey(k.key)).toEqual({ id: k.id, secret: k.secret });
      expect(k.prefix).toBe(`evk_${k.id}_${k.secret.slice(0, 4)}`);
      expect(k.key.startsWith(k.prefix)).toBe(true);
      seen.add(k.key);
    }
    expect(seen.size).toBe(200);
  });

  it('a secret containing _ or - still parses (the id is fixed-length)', () => {
    const random = (n: number) => (n === 8 ? Buffer.alloc(8, 0xab) : Buffer.alloc(32, 0xff));
    const k = generateApiKey(random);
    expect(k.secret).toMatch(/^_+/); // 0xff... in base64url is all underscores
    expect(parseApiKey(k.key)).toEqual({ id: 'abababababababab', secret: k.secret });
  });

  const ID = '0123456789abcdef';
  const SECRET = 'a'.repeat(43);
  it('accepts the well-formed template the next cases break', () => {
    expect(parseApiKey(`evk_${ID}_${SECRET}`)).toEqual({ id: ID, secret: SECRET });
  });

  it.each([
    ['', 'empty'],
    [`evk_${ID}`, 'no secret'],
    [`evk_${ID}_`, 'empty secret'],
    [`evk_${ID.toUpperCase()}_${SECRET}`, 'upper-case id'],
    [`evk_${ID.slice(1)}_${SECRET}`, 'short id'],
    [`evk_${ID}_${SECRET.slice(1)}`, 'short secret'],
    [`evk_${ID}_${SECRET}a`, 'long secret'],
    [`xyz_${ID}_${SECRET}`, 'wrong scheme'],
    [` evk_${ID}_${SECRET}`, 'leading space'],
    [`evk_${ID}_${SECRET}\n`, 'trailing newline'],
    [`evk_${ID}_${SECRET.slice(1)}+`, 'not base64url'],
  ])('refuses a malformed key: %j (%s)', (key) => {
    expect(parseApiKey(key)).toBeNull();
  });

  it('hashes with the pepper and the id: each changes the stored hash', () => {
    const h = hashApiKeySecret('pepper', '0123456789abcdef', 'secret');
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKeySecret('pepper', '0123456789abcdef', 'secret')).toBe(h);
    expect(hashApiKeySecret('other', '0123456789abcdef', 'secret')).not.toBe(h);
    expect(hashApiKeySecret('pepper', '0123456789abcdee', 'secret')).not.toBe(h);
    expect(hashApiKeySecret('pepper', '0123456789abcdef', 'secreT')).not.toBe(h);
    expect(hashApiKeySecret('', '0123456789abcdef', 'secret')).not.toBe(h);
    expect(h).not.toContain('secret');
  });

  it('compares hashes in constant time, and different lengths are unequal (not an exception)', () => {
    const h = hashApiKeySecret('p', '0123456789abcdef', 's');
    expect(apiKeyHashesEqual(h, h)).toBe(true);
    expect(apiKeyHashesEqual(h, `${h.slice(0, 63)}${h[63] === '0' ? '1' : '0'}`)).toBe(false);
    expect(apiKeyHashesEqual(h, h.slice(0, 10))).toBe(false);
    expect(apiKeyHashesEqual('', h)).toBe(false);
  });

  it('validates tiers, ids and names', () => {
    expect(['viewer', 'operator', 'admin'].every(isApiKeyTier)).toBe(true);
    expect([undefined, '', 'Admin', 'root', 1].some(isApiKeyTier)).toBe(false);
    expect(isApiKeyId('0123456789abcdef')).toBe(true);
    expect(isApiKeyId("0123456789abcdef' OR 1=1")).toBe(false);
    expect(API_KEY_NAME_PATTERN.test('ci ops@team/main')).toBe(true);
    expect(API_KEY_NAME_PATTERN.test('')).toBe(false);
    expect(API_KEY_NAME_PATTERN.test('x'.repeat(101))).toBe(false);
    expect(API_KEY_NAME_PATTERN.test('bad\nname')).toBe(false);
  });
});
