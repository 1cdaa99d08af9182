/**
 * `json_valid` (S1): passes when the whole output is one JSON text (RFC 8259, see json.ts for the exact
 * grammar: JSON whitespace around the value is allowed, a BOM or anything else is not; a code fence
 * around the JSON makes it invalid).
 *
 * - `require` (`any`): `object` or `array` also demand that kind of top-level value; a valid text of another
 *   kind fails with `wrong_json_type`.
 */
import { checkOptionKeys, readEnum, refuse } from './issues';
import { checkJson } from './json';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';


export const JSON_VALID_LABELS = ['valid_json', 'invalid_json', 'wrong_json_type'] as const;

export const JSON_REQUIRE = ['any', 'object', 'array'] as const;
export type JsonRequire = (typeof JSON_REQUIRE)[number];

export interface JsonValidConfig {
  readonly require: JsonRequire;
}

const NAME = 'json_valid';
const OPTIONS = ['require'] as const;

/** The options next to `type`, as JSON Schema (the registry's `scorerOptionSchemas`). */
export const JSON_VALID_OPTIONS_SCHEMA = {
  properties: {
    require: { type: 'string', enum: JSON_REQUIRE, description: 'The kind of top-level value demanded (default `any`).' },
  },
} as const;

export const jsonValidScorer: Scorer<JsonValidConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: JSON_VALID_LABELS,
  validate(raw) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const require = readEnum(NAME, raw, 'require', JSON_REQUIRE, 'any', issues);
    return issues.length > 0 ? refuse(issues) : { ok: true, config: { require } };
  },
  score(output, config) {
    const result = checkJson(output);
    if (!result.valid) return fail('invalid_json');
    if (config.require !== 'any' && result.kind !== config.require) return fail('wrong_json_type');
    return pass('valid_json');
  },
};
