import { jsonNestingExceeds, MAX_BODY_DEPTH, verifyJsonDepth, BODY_TOO_DEEP_TYPE } from './body-depth';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('unit: the JSON nesting limit, checked on the raw body (docs/http-api.md)', () => {
  it('counts objects and arrays alike, up to the limit included', () => {
    const at = (depth: number, open = '{"a":', close = '}') => open.repeat(depth - 1) + '[1]' + close.repeat(depth - 1);
    expect(jsonNestingExceeds(bytes(at(MAX_BODY_DEPTH)))).toBe(false);
    expect(jsonNestingExceeds(bytes(at(MAX_BODY_DEPTH + 1)))).toBe(true);
    expect(jsonNestingExceeds(bytes(at(MAX_BODY_DEPTH + 1, '[', ']')))).toBe(true);
    expect(jsonNestingExceeds(bytes('[[1],[2],{"a":[3]}]'), 3)).toBe(false);
    expect(jsonNestingExceeds(bytes('[[1],[2],{"a":[[3]]}]'), 3)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ output: '['.repeat(10_000) + '\\"{{{' + '"' + '{'.repeat(500), note: 'a\\"[' });
    expect(jsonNestingExceeds(bytes(text))).toBe(false);
    expect(jsonNestingExceeds(bytes(JSON.stringify({ s: 'é"[[[', t: [[['x']]] })), 3)).toBe(true);
  });

  it('a 100 000-deep object is refused in one linear pass, as the error body-parser reports with its type', () => {
    const deep = bytes('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000));
    const started = process.hrtime.bigint();
    let thrown: unknown;
    try {
      verifyJsonDepth(undefined, undefined, deep);
    } catch (error) {
      thrown = error;
    }
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000);
    expect(thrown).toMatchObject({ type: BODY_TOO_DEEP_TYPE, status: 400 });
    expect(() => verifyJsonDepth(undefined, undefined, bytes('{"ok":[1,2,3]}'))).not.toThrow();
  });
});
