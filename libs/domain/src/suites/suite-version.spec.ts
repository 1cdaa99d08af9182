import { nextSuiteVersion } from './suite-version';

const h = (c: string): string => c.repeat(64);

describe('nextSuiteVersion (V2)', () => {
  it('mints version 1 for a new suite', () => {
    expect(nextSuiteVersion([], h('a'))).toEqual({ kind: 'new', version: 1 });
  });

  it('returns the latest version when the content equals it: pushing again is idempotent', () => {
    const existing = [
      { version: 1, content_hash: h('a') },
      { version: 2, content_hash: h('b') },
    ];
    expect(nextSuiteVersion(existing, h('b'))).toEqual({ kind: 'existing', version: 2 });
    expect(nextSuiteVersion(existing, h('b'))).toEqual(nextSuiteVersion(existing, h('b')));
  });

  it('mints latest + 1 for new content', () => {
    expect(nextSuiteVersion([{ version: 1, content_hash: h('a') }], h('c'))).toEqual({ kind: 'new', version: 2 });
  });

  it('treats the content of an older version as a revert: a new version, saying which one it repeats', () => {
    const existing = [
      { version: 1, content_hash: h('a') },
      { version: 2, content_hash: h('b') },
      { version: 3, content_hash: h('a') },
      { version: 4, content_hash: h('c') },
    ];
    expect(nextSuiteVersion(existing, h('a'))).toEqual({ kind: 'new', version: 5, same_content_as: 3 });
    // ...and pushing the reverted content once more is then idempotent.
    expect(nextSuiteVersion([...existing, { version: 5, content_hash: h('a') }], h('a'))).toEqual({ kind: 'existing', version: 5 });
  });

  it('finds the latest by number, whatever the order given', () => {
    const existing = [
      { version: 3, content_hash: h('c') },
      { version: 1, content_hash: h('a') },
      { version: 2, content_hash: h('b') },
    ];
    expect(nextSuiteVersion(existing, h('c'))).toEqual({ kind: 'existing', version: 3 });
    expect(nextSuiteVersion(existing, h('d'))).toEqual({ kind: 'new', version: 4 });
  });

  it('refuses malformed input with a stable code', () => {
    expect(() => nextSuiteVersion([], 'ABC')).toThrow(expect.objectContaining({ code: 'SUITE_HASH_INVALID' }));
    expect(() => nextSuiteVersion([{ version: 0, content_hash: h('a') }], h('a'))).toThrow(expect.objectContaining({ code: 'SUITE_VERSIONS_INVALID' }));
    expect(() => nextSuiteVersion([{ version: 1.5, content_hash: h('a') }], h('a'))).toThrow(expect.objectContaining({ code: 'SUITE_VERSIONS_INVALID' }));
    expect(() =>
      nextSuiteVersion(
        [
          { version: 1, content_hash: h('a') },
          { version: 1, content_hash: h('b') },
        ],
        h('a'),
      ),
    ).toThrow(expect.objectContaining({ code: 'SUITE_VERSIONS_INVALID' }));
    expect(() => nextSuiteVersion([{ version: 1, content_hash: 'x' }], h('a'))).toThrow(expect.objectContaining({ code: 'SUITE_VERSIONS_INVALID' }));
  });
});
