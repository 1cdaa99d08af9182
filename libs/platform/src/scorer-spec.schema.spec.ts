import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScorerIssueCode, scorerNames, scorers, validateScorerSpec, type ScorerName } from '@evals/scorers';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { SCORER_SPEC_COMPONENTS, SCORER_SPEC_PROPERTY, scorerSpecComponent, scorerSpecSchema } from './scorer-spec.schema';

/*
 * The OpenAPI description of a scorer spec against the registry's validator: what the docs show and what
 * the fixed lists below hold is accepted by both, what the validator refuses for an option's type, a
 * missing required option or an unknown key is refused by the schema too, and the oneOf lists exactly the
 * registered scorers. The schema is a description, not a second validator: it may accept what only the
 * validator can refuse (min > max, a pattern RE2 rejects, the case's `expected`).
 */

/** A property's schema as a document resolves it: its references point into the scorer spec components. */
function resolvable(schema: object): object {
  const defs = JSON.parse(JSON.stringify(SCORER_SPEC_COMPONENTS).replaceAll('#/components/schemas/', '#/$defs/'));
  return { $defs: defs, ...JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', '#/$defs/')) };
}

// As the HTTP contract test holds answers to the document (test/support/openapi-conformance.ts).
const matches = new Ajv({ strict: false, allErrors: true }).compile(resolvable(SCORER_SPEC_PROPERTY));

/** A case `expected` each scorer can use, for specs whose case gives none. */
const EXPECTED: { readonly [N in ScorerName]?: unknown } = { exact: 'hello', contains: ['a', 'b'], not_contains: 'x', json_equal: { a: 1 }, contains_any: ['a', 'b'], fuzzy_match: 'x' };

interface Example {
  readonly spec: Record<string, unknown>;
  readonly expected?: unknown;
}

/** Every scorer spec in the YAML blocks of docs/scorers.md, with its case's `expected` when it has one. */
function docExamples(): Example[] {
  const text = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'scorers.md'), 'utf8');
  const examples: Example[] = [];
  for (const [, block] of text.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    let items: unknown;
    try {
      items = parse(block!);
    } catch {
      // A block listing several specs under the same key: one line each.
      items = block!.split('\n').filter((line) => /^\s*(default_)?scorer: \{/.test(line)).map((line) => parse(line));
    }
    for (const item of Array.isArray(items) ? items : [items]) {
      if (item === null || typeof item !== 'object') continue;
      const record = item as Record<string, unknown>;
      const spec = record['scorer'] ?? record['default_scorer'];
      if (spec !== undefined) examples.push({ spec: spec as Record<string, unknown>, ...('expected' in record ? { expected: record['expected'] } : {}) });
    }
  }
  return examples;
}

/** Specs the validator accepts, at least one per scorer and every option. */
const VALID: Record<ScorerName, Record<string, unknown>[]> = {
  exact: [{}, { trim: true }, { ignore_case: false }, { trim: false, ignore_case: true }],
  contains: [{}, { value: 'refund' }, { value: ['refund', 'order'], ignore_case: true }],
  not_contains: [{}, { value: '4111' }, { value: ['a'], ignore_case: false }],
  regex: [{ pattern: '^a' }, { pattern: '\\d+', flags: '' }, { pattern: 'x', flags: 'ims' }, { pattern: 'x', flags: 'si' }],
  json_valid: [{}, { require: 'any' }, { require: 'object' }, { require: 'array' }],
  json_equal: [{}],
  numeric_range: [{ min: 0 }, { max: 10 }, { min: -1.5, max: 2.5 }, { min: 0, max: 10, extract: 'first' }, { max: 1, extract: 'whole' }],
  starts_with: [{ value: 'Hi' }],
  contains_any: [{}, { value: 'a' }, { value: ['a', 'b'], ignore_case: true }],
  contains_json: [{}],
  levenshtein: [{ value: 'abc' }, { value: '', max_distance: 0 }, { value: 'x', max_distance: 7 }],
  fuzzy_match: [{}, { value: 'Paris' }, { value: ['a', 'b'] }],
  all: [{ scorers: [{ type: 'contains', value: 'a' }] }, { scorers: [{ type: 'json_valid' }, { type: 'contains_json' }], weights: [1, 0], threshold: 0.5 }],
  not: [{ scorer: { type: 'regex', pattern: 'a' } }],
  llm_judge: [{ rubric: 'Polite.' }, { rubric: 'x', min_score: 0 }, { rubric: 'x', min_score: 1, repeats: 2 }, { rubric: 'x', repeats: 10 }],
};

/** Specs the validator refuses for an option's type or value, a missing required option or an unknown key. */
const REFUSED: Record<ScorerName, Record<string, unknown>[]> = {
  exact: [{ trim: 'yes' }, { ignore_case: 1 }, { trim: null }, { options: { trim: true } }, { value: 'a' }],
  contains: [{ value: 1 }, { value: '' }, { value: [] }, { value: ['a', 2] }, { value: [''] }, { value: null }, { ignore_case: 'no' }, { pattern: 'a' }],
  not_contains: [{ value: 1 }, { value: '' }, { value: [] }, { value: [null] }, { ignore_case: 0 }, { values: ['a'] }],
  regex: [{}, { flags: 'i' }, { pattern: 1 }, { pattern: '' }, { pattern: null }, { pattern: 'a', flags: 1 }, { pattern: 'a', flags: 'x' }, { pattern: 'a', flags: 'g' }, { pattern: 'a', trim: true }],
  json_valid: [{ require: 'string' }, { require: 1 }, { require: null }, { strict: true }],
  json_equal: [{ ignore_order: true }, { expected: 1 }],
  numeric_range: [{}, { extract: 'first' }, { min: '1' }, { max: null }, { min: 0, extract: 'last' }, { min: 0, max: true }, { min: 0, step: 1 }],
  starts_with: [{ value: '' }, { value: 1 }, { value: 'a', ignore_case: true }],
  contains_any: [{ value: 1 }, { value: [] }, { ignore_case: 'no' }],
  contains_json: [{ schema: {} }],
  levenshtein: [{ value: 1 }, { value: 'a', max_distance: -1 }, { value: 'a', max_distance: 1.5 }, { value: 'a', threshold: 1 }],
  fuzzy_match: [{ value: 1 }, { value: [] }, { value: 'a', ignore_case: true }],
  all: [{}, { scorers: [] }, { scorers: 'x' }, { scorers: [{ type: 'json_valid' }], weights: [-1] }],
  not: [{}, { scorer: 'x' }, { scorer: { type: 'json_valid' }, extra: 1 }],
  llm_judge: [
    {},
    { min_score: 0.7 },
    { rubric: 1 },
    { rubric: '' },
    { rubric: ' \n\t' },
    { rubric: 'x', min_score: 2 },
    { rubric: 'x', min_score: -0.1 },
    { rubric: 'x', min_score: '0.5' },
    { rubric: 'x', repeats: 1 },
    { rubric: 'x', repeats: 11 },
    { rubric: 'x', repeats: 2.5 },
    { rubric: 'x', model: 'gpt' },
  ],
};

const OPTION_CODES: readonly string[] = [ScorerIssueCode.OPTION_INVALID, ScorerIssueCode.OPTION_MISSING, ScorerIssueCode.OPTION_UNKNOWN];

function verdicts(spec: unknown, expected: unknown): { readonly validator: true | readonly string[]; readonly schema: boolean } {
  const checked = validateScorerSpec(spec, expected === undefined ? {} : { expected });
  return { validator: checked.ok ? true : checked.issues.map((i) => i.code), schema: matches(spec) };
}

describe('the OpenAPI scorer spec schema (built from the registry)', () => {
  it('lists exactly the registered scorers, one object schema each, told apart by `type`', () => {
    const union = SCORER_SPEC_COMPONENTS.ScorerSpec as { oneOf: Array<{ $ref: string }>; discriminator: { propertyName: string; mapping: Record<string, string> } };
    const members = union.oneOf.map((ref) => SCORER_SPEC_COMPONENTS[ref.$ref.replace('#/components/schemas/', '')] as { properties: { type: { enum: string[] } } });
    expect(members.map((m) => m.properties.type.enum)).toEqual(scorerNames.map((n) => [n]));
    expect(union.discriminator).toEqual({ propertyName: 'type', mapping: Object.fromEntries(scorerNames.map((n) => [n, `#/components/schemas/${scorerSpecComponent(n)}`])) });
    expect(SCORER_SPEC_PROPERTY).toEqual({ oneOf: [{ $ref: '#/components/schemas/ScorerSpec' }] });
    // Ajv's discriminator keyword refuses to compile a oneOf whose members `type` does not tell apart (it
    // knows no `mapping`, which OpenAPI needs here: the members' names are not the `type` values).
    expect(() => new Ajv({ strict: false, discriminator: true }).compile(resolvable({ ...union, discriminator: { propertyName: 'type' } }))).not.toThrow();
    for (const schema of members) expect(schema).toMatchObject({ type: 'object', required: expect.arrayContaining(['type']), additionalProperties: false });
  });

  it("types each scorer's options: one property per option the scorer takes, no other", () => {
    for (const name of scorerNames) {
      const { type, ...options } = (scorerSpecSchema(name) as { properties: Record<string, unknown> }).properties;
      expect({ name, type }).toEqual({ name, type: { type: 'string', enum: [name] } });
      expect({ name, options: Object.keys(options).sort() }).toEqual({ name, options: [...scorers[name].options].sort() });
    }
  });

  it('accepts every scorer spec of docs/scorers.md, as the validator does, and the docs show every scorer', () => {
    const examples = docExamples();
    expect(new Set(examples.map((e) => e.spec['type']))).toEqual(new Set(scorerNames));
    for (const example of examples) {
      const { spec } = example;
      const expected = 'expected' in example ? example.expected : EXPECTED[spec['type'] as ScorerName];
      expect({ spec, ...verdicts(spec, expected) }).toEqual({ spec, validator: true, schema: true });
    }
  });

  it.each(scorerNames)('%s: accepts the valid specs, as the validator does', (name) => {
    for (const options of VALID[name]) {
      const spec = { type: name, ...options };
      expect({ spec, ...verdicts(spec, EXPECTED[name]) }).toEqual({ spec, validator: true, schema: true });
    }
  });

  it.each(scorerNames)('%s: refuses a wrong option type or value, a missing required option and an unknown option, as the validator does', (name) => {
    for (const options of REFUSED[name]) {
      const spec = { type: name, ...options };
      const { validator, schema } = verdicts(spec, EXPECTED[name]);
      expect({ spec, refusedBy: validator === true ? [] : validator.filter((code: string) => OPTION_CODES.includes(code)).slice(0, 1), schema }).toEqual({
        spec,
        refusedBy: [expect.any(String)],
        schema: false,
      });
    }
  });

  it('refuses what is no scorer spec, as the validator does', () => {
    for (const spec of [{}, { type: 'nope' }, { type: 1 }, { trim: true }, 'exact', null, [{ type: 'exact' }]]) {
      expect({ spec, ...verdicts(spec, 'hello') }).toEqual({ spec, validator: expect.any(Array), schema: false });
    }
  });
});
