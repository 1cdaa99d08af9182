import { ID_PATTERN, isSafeId, isSuiteKey, isTimestamp, isToken, MAX_ID_LENGTH, utf8ByteLength } from './limits';

describe('identifier formats', () => {
  it.each([
    'a',
    '0',
    'run-1',
    'ci:github:1234',
    'agent@v3',
    '01HZX3K9Q2ABCDEF',
    '3f2b1c9e-8a47-4d2e-9b1f-0c6a7e5d4f21',
    'x'.repeat(MAX_ID_LENGTH),
  ])('accepts id %s', (id) => expect(isSafeId(id)).toBe(true));

  it.each([
    '',
    ' run',
    'run 1',
    'a/b',
    '../x',
    '-x',
    '.hidden',
    'é',
    'a\nb',
    'a"b',
    'x'.repeat(MAX_ID_LENGTH + 1),
  ])('refuses id %j', (id) => expect(isSafeId(id)).toBe(false));

  it('refuses non-strings', () => {
    for (const v of [1, null, undefined, {}, ['a']]) expect(isSafeId(v)).toBe(false);
  });

  it('documents its charset in the pattern', () => {
    expect(ID_PATTERN.source).toBe('^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$');
  });

  it('suite keys are lowercase slugs of at most 128 characters', () => {
    expect(isSuiteKey('support-triage')).toBe(true);
    expect(isSuiteKey('extraction.json_v2')).toBe(true);
    expect(isSuiteKey('Support')).toBe(false);
    expect(isSuiteKey('a b')).toBe(false);
    expect(isSuiteKey('a'.repeat(128))).toBe(true);
    expect(isSuiteKey('a'.repeat(129))).toBe(false);
  });

  it('tokens are short lowercase words starting with a letter', () => {
    expect(isToken('agent')).toBe(true);
    expect(isToken('human_in_loop')).toBe(true);
    expect(isToken('1agent')).toBe(false);
    expect(isToken('Agent')).toBe(false);
  });
});

describe('isTimestamp', () => {
  it.each([
    '2025-03-01T12:00:00Z',
    '2025-03-01T12:00:00.123Z',
    '2025-03-01T12:00:00.123456789Z',
    '2025-03-01T12:00:00+02:00',
    '2025-03-01T23:59:59-11:30',
    '2024-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
  ])('accepts %s', (t) => expect(isTimestamp(t)).toBe(true));

  it.each([
    '2025-03-01',
    '2025-03-01T12:00:00',
    '2025-03-01 12:00:00Z',
    '2025-03-01t12:00:00z',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2025-04-31T00:00:00Z',
    '2025-13-01T00:00:00Z',
    '2025-00-01T00:00:00Z',
    '2025-03-01T24:00:00Z',
    '2025-03-01T12:60:00Z',
    '2025-03-01T12:00:60Z',
    '2025-03-01T12:00:00+24:00',
    '2025-03-01T12:00:00.Z',
    'yesterday',
  ])('refuses %s', (t) => expect(isTimestamp(t)).toBe(false));
});

describe('utf8ByteLength', () => {
  it('counts bytes, not UTF-16 units', () => {
    expect(utf8ByteLength('abc')).toBe(3);
    expect(utf8ByteLength('é')).toBe(2);
    expect(utf8ByteLength('€')).toBe(3);
    expect(utf8ByteLength('😀')).toBe(4);
  });
});
