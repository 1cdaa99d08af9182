/**
 * The nesting limit of a JSON request body (docs/http-api.md): deeper than any payload of the API - a
 * suite's values may nest 64 levels (docs/suites.md) under the suite's own three - and far below what
 * would overflow a stack in anything that walks the parsed tree (JSON.stringify, class-transformer,
 * canonical hashing). Checked on the raw bytes before JSON.parse, by one linear scan that recurses nowhere.
 */
export const MAX_BODY_DEPTH = 128;

/** The body-parser error `type` of a body over the limit; ApiExceptionFilter answers it 400 BODY_TOO_DEEP. */
export const BODY_TOO_DEEP_TYPE = 'entity.too.deep';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * The deepest nesting of objects and arrays in JSON text, counting brackets outside strings, stopping as
 * soon as `limit` is exceeded. Not a validator: malformed text is left to JSON.parse. UTF-8 continuation
 * bytes are never ASCII, so scanning bytes is exact.
 */
export function jsonNestingExceeds(raw: Uint8Array, limit = MAX_BODY_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
      continue;
    }
    if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** body-parser's `verify` hook for JSON: refuses a body nested deeper than MAX_BODY_DEPTH before it is parsed. */
export function verifyJsonDepth(_req: unknown, _res: unknown, raw: Buffer): void {
  if (jsonNestingExceeds(raw)) {
    throw Object.assign(new Error('the JSON body is nested too deeply'), { type: BODY_TOO_DEEP_TYPE, status: 400, expose: false });
  }
}
