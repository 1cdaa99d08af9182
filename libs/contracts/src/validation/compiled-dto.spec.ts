import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsArray, IsOptional, IsString, ValidateNested } from 'class-validator';
import fc from 'fast-check';
import { MAX_INLINE_OUTPUTS, MAX_OUTPUT_BYTES } from '../limits';
import { MESSAGE_DEFINITIONS } from '../registry';
import { OUTPUT_SUBMITTED_V1, OUTPUT_SUBMITTED_V1_EXAMPLE } from '../messages/output-submitted.v1.message';
import { RUN_REQUESTED_V1, RUN_REQUESTED_V1_EXAMPLE } from '../messages/run-requested.v1.message';
import { validateCompiled } from './compiled-dto';
import { IsSafeId } from './constraints';
import { type DtoValidationOptions, validateDto } from './dto-validation';

/*
 * The compiled check is an accelerator of the class-validator DTOs (issue 15): whatever it accepts, the DTOs
 * accept with the very same value (same keys, same order), and whatever the DTOs refuse, it does not accept
 * (it answers null and the caller asks the DTOs, so refusals keep their issues and codes).
 */

const INBOUND: DtoValidationOptions = { unknownFields: 'refuse', dropNulls: true };
const STRIP: DtoValidationOptions = { unknownFields: 'strip', dropNulls: false };

/** The compiled answer must never contradict the DTOs: null, or exactly their value. */
function agrees(dto: new () => object, plain: Record<string, unknown>, options: DtoValidationOptions): 'compiled' | 'fallback' {
  const full = validateDto(dto, plain, 'data', options);
  const compiled = validateCompiled(dto, plain, options);
  if (compiled === null) return 'fallback';
  expect(full.ok).toBe(true);
  expect(compiled.ok).toBe(true);
  // JSON text, not toEqual: the key order must match too (request hashes and wire bytes are built from it).
  expect(JSON.stringify(compiled.ok && compiled.value)).toBe(JSON.stringify(full.ok && full.value));
  return 'compiled';
}

class ItemDto {
  @IsString()
  label!: string;
}

/** An array declared before a flat field: the value keeps the declaration order, as the DTO path does. */
class ArrayFirstDto {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ItemDto)
  items!: ItemDto[];

  @IsSafeId()
  id!: string;

  @IsOptional()
  @IsString()
  note?: string;
}

describe('validateCompiled (the DTOs stay the source of truth)', () => {
  it('keeps the declaration order of the DTO whatever the order of the payload', () => {
    expect(agrees(ArrayFirstDto, { note: 'n', id: 'x-1', items: [{ label: 'a' }] }, INBOUND)).toBe('compiled');
    expect(Object.keys((validateCompiled(ArrayFirstDto, { note: 'n', id: 'x-1', items: [] }, INBOUND) as { value: object }).value)).toEqual(['items', 'id', 'note']);
  });

  it('takes the fast path for a valid run.requested with inline outputs and for output.submitted, with the DTOs value', () => {
    const outputs = Array.from({ length: 2_000 }, (_, i) => ({ output: `answer ${i} é ✓`, case_id: `c${i}` }));
    expect(agrees(RUN_REQUESTED_V1.dto, { ...RUN_REQUESTED_V1_EXAMPLE, outputs }, INBOUND)).toBe('compiled');
    expect(agrees(RUN_REQUESTED_V1.dto, { ...RUN_REQUESTED_V1_EXAMPLE }, INBOUND)).toBe('compiled');
    expect(agrees(OUTPUT_SUBMITTED_V1.dto, { ...OUTPUT_SUBMITTED_V1_EXAMPLE }, INBOUND)).toBe('compiled');
  });

  it('drops null optional fields of inbound data as the DTO path does, and keeps them when told to', () => {
    const plain = { ...RUN_REQUESTED_V1_EXAMPLE, variant: null, baseline_run_id: null, suite_version: null, outputs: null };
    expect(agrees(RUN_REQUESTED_V1.dto, plain, INBOUND)).toBe('compiled');
    expect(agrees(RUN_REQUESTED_V1.dto, plain, STRIP)).toBe('compiled');
  });

  it.each<[string, Record<string, unknown>]>([
    ['an invalid case id in one output', { outputs: [{ case_id: 'ok', output: 'x' }, { case_id: ' bad', output: 'y' }] }],
    ['an output that is not a string', { outputs: [{ case_id: 'a', output: 42 }] }],
    ['a missing output', { outputs: [{ case_id: 'a' }] }],
    ['a null output', { outputs: [{ case_id: 'a', output: null }] }],
    ['an unknown key in an output', { outputs: [{ case_id: 'a', output: 'x', extra: 1 }] }],
    ['a prototype-reaching key in an output', { outputs: [JSON.parse('{"case_id":"a","output":"x","__proto__":{"y":1}}')] }],
    ['an output that is an array', { outputs: [['a', 'x']] }],
    ['outputs that are an object', { outputs: { 0: { case_id: 'a', output: 'x' } } }],
    ['an output over the byte limit', { outputs: [{ case_id: 'a', output: 'é'.repeat(MAX_OUTPUT_BYTES / 2 + 1) }] }],
    ['more outputs than the inline cap', { outputs: Array.from({ length: MAX_INLINE_OUTPUTS + 1 }, (_, i) => ({ case_id: `c${i}`, output: 'x' })) }],
    ['an unknown top-level field', { extra: true }],
    ['a nested object where a string belongs', { subject_id: { a: 1 } }],
    ['a bad source', { source: 'nowhere' }],
    ['a missing run id', { run_id: undefined }],
    ['a version that is not an integer', { suite_version: 1.5 }],
  ])('never accepts what the DTOs refuse: %s', (_name, change) => {
    const plain = JSON.parse(JSON.stringify({ ...RUN_REQUESTED_V1_EXAMPLE, ...change }));
    if (_name.includes('prototype')) expect(Object.keys(plain.outputs[0])).toContain('__proto__');
    const full = validateDto(RUN_REQUESTED_V1.dto, plain, 'data', INBOUND);
    expect(full.ok).toBe(false);
    expect(validateCompiled(RUN_REQUESTED_V1.dto, plain, INBOUND)).toBeNull();
  });

  it('the output just at the byte limit is accepted by both', () => {
    const plain = { ...RUN_REQUESTED_V1_EXAMPLE, outputs: [{ case_id: 'a', output: 'é'.repeat(MAX_OUTPUT_BYTES / 2) }] };
    expect(agrees(RUN_REQUESTED_V1.dto, plain, INBOUND)).toBe('compiled');
  });

  it('agrees with the DTOs on random payloads of every registered message (property)', () => {
    const seen = { compiled: 0, fallback: 0 };
    const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('c-1', 'sandbox', 'agent', 'x'));
    const output = fc.dictionary(fc.constantFrom('case_id', 'output', 'other'), value, { maxKeys: 3 });
    for (const def of MESSAGE_DEFINITIONS) {
      const example = def.example as unknown as Record<string, unknown>;
      const keys = Object.keys(example);
      fc.assert(
        fc.property(
          fc.dictionary(fc.constantFrom(...keys, 'outputs', 'unknown_key'), fc.oneof(value, fc.array(output, { maxLength: 4 })), { maxKeys: 4 }),
          fc.boolean(),
          (change, inbound) => {
            seen[agrees(def.dto, { ...example, ...change }, inbound ? INBOUND : STRIP)]++;
          },
        ),
        { numRuns: 200 },
      );
    }
    // Both answers were exercised: the property is not vacuous.
    expect(seen.compiled).toBeGreaterThan(50);
    expect(seen.fallback).toBeGreaterThan(50);
  });
});
