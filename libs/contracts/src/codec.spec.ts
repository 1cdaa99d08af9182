import fc from 'fast-check';
import { decodeMessage, type DecodeResult, encodeMessage, MAX_REASON_ISSUES, serializeMessage } from './codec';
import { DECODE_ERROR_CODES } from './contract-error';
import { MAX_MESSAGE_BYTES, MAX_OUTPUT_BYTES } from './limits';
import { MESSAGE_DEFINITIONS } from './registry';
import { SUBJECTS } from './subjects';
import { OUTPUT_SUBMITTED_V1_EXAMPLE } from './messages/output-submitted.v1.message';
import { RESULT_RECORDED_V1_EXAMPLE } from './messages/result-recorded.v1.message';
import { RUN_REQUESTED_V1_EXAMPLE } from './messages/run-requested.v1.message';

const META = {
  message_id: 'msg-1',
  correlation_id: 'corr-1',
  causation_id: 'cause-1',
  occurred_at: '2025-03-01T12:00:00.000Z',
};

const SUBMITTED = {
  schema: 'evals.output.submitted.v1',
  type: 'evals.output.submitted',
  version: 1,
  data: OUTPUT_SUBMITTED_V1_EXAMPLE,
  metadata: META,
};

function decodeObject(subject: string, value: unknown): DecodeResult {
  return decodeMessage(subject, JSON.stringify(value));
}

function failureOf(r: DecodeResult): { code: string; reason: string; issues: string[]; message_id?: string } {
  if (r.ok) throw new Error('expected a failure');
  return { code: r.code, reason: r.reason, issues: r.issues.map((i) => `${i.field}: ${i.constraint}`), message_id: r.message_id };
}

describe('decodeMessage: the envelope', () => {
  it('decodes bytes and strings alike', () => {
    const text = JSON.stringify(SUBMITTED);
    const fromString = decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, text);
    const fromBytes = decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, new TextEncoder().encode(text));
    expect(fromString).toEqual(fromBytes);
    expect(fromString.ok && fromString.message).toEqual(SUBMITTED);
  });

  it('lets narrowing on schema reach typed data', () => {
    const r = decodeObject(SUBJECTS.OUTPUT_SUBMITTED, SUBMITTED);
    if (!r.ok || r.message.schema !== 'evals.output.submitted.v1') throw new Error('expected output.submitted');
    const caseId: string = r.message.data.case_id;
    expect(caseId).toBe(OUTPUT_SUBMITTED_V1_EXAMPLE.case_id);
  });

  it('defaults correlation_id and causation_id to the message_id when an inbound producer omits them', () => {
    const r = decodeObject(SUBJECTS.OUTPUT_SUBMITTED, {
      ...SUBMITTED,
      metadata: { message_id: 'm-9', occurred_at: META.occurred_at },
    });
    expect(r.ok && r.message.metadata).toEqual({
      message_id: 'm-9',
      correlation_id: 'm-9',
      causation_id: 'm-9',
      occurred_at: META.occurred_at,
    });
    const nulls = decodeObject(SUBJECTS.OUTPUT_SUBMITTED, {
      ...SUBMITTED,
      metadata: { ...META, correlation_id: null, causation_id: null },
    });
    expect(nulls.ok && nulls.message.metadata.correlation_id).toBe('msg-1');
  });

  it('ignores unknown envelope and metadata keys (the envelope is shared across teams)', () => {
    const r = decodeObject(SUBJECTS.OUTPUT_SUBMITTED, {
      ...SUBMITTED,
      trace: 'abc',
      metadata: { ...META, traceparent: '00-abc' },
    });
    expect(r.ok && r.message).toEqual(SUBMITTED);
  });

  it('ignores a UTF-8 byte order mark', () => {
    const r = decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, `\uFEFF${JSON.stringify(SUBMITTED)}`);
    expect(r.ok).toBe(true);
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(SUBMITTED))]);
    expect(decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, bytes).ok).toBe(true);
  });

  it.each([
    ['', 'message: json'],
    ['{', 'message: json'],
    ['{"a":1}{"b":2}', 'message: json'],
    ["{'single': 'quotes'}", 'message: json'],
    ['NaN', 'message: json'],
  ])('refuses %j as MALFORMED_JSON', (text, issue) => {
    const f = failureOf(decodeMessage(SUBJECTS.RUN_SEALED, text));
    expect(f.code).toBe('MALFORMED_JSON');
    expect(f.issues).toEqual([issue]);
  });

  it('refuses invalid UTF-8 as MALFORMED_JSON', () => {
    const bytes = Buffer.concat([Buffer.from('{"schema":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const f = failureOf(decodeMessage(SUBJECTS.RUN_SEALED, bytes));
    expect(f.code).toBe('MALFORMED_JSON');
    expect(f.issues).toEqual(['message: utf8']);
  });

  it('refuses a message over MAX_MESSAGE_BYTES before parsing it', () => {
    const big = new Uint8Array(MAX_MESSAGE_BYTES + 1).fill(0x20);
    const f = failureOf(decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, big));
    expect(f.code).toBe('MESSAGE_TOO_LARGE');
    expect(f.reason).toBe(`message: maxMessageBytes (limit ${MAX_MESSAGE_BYTES} bytes)`);
  });

  it.each([[null], [[]], ['"text"'], [42]])('refuses a non-object envelope %j', (value) => {
    const f = failureOf(decodeObject(SUBJECTS.RUN_SEALED, value));
    expect(f.code).toBe('INVALID_ENVELOPE');
    expect(f.issues).toEqual(['envelope: isObject']);
  });

  it('lists every envelope problem at once', () => {
    const f = failureOf(decodeObject(SUBJECTS.RUN_SEALED, { version: 0, metadata: { message_id: 'bad id' } }));
    expect(f.code).toBe('INVALID_ENVELOPE');
    expect(f.issues.sort()).toEqual(
      [
        'schema: required',
        'type: required',
        'version: isVersion',
        'data: required',
        'metadata.message_id: isSafeId',
        'metadata.occurred_at: required',
      ].sort(),
    );
    expect(f.message_id).toBeUndefined();
  });

  it('reports the message_id of a refused message when it is well-formed, for tracing', () => {
    const f = failureOf(decodeObject(SUBJECTS.RUN_SEALED, { ...SUBMITTED, type: 'evals.run.sealed', schema: 'evals.run.sealed.v1' }));
    expect(f.code).toBe('INVALID_PAYLOAD');
    expect(f.message_id).toBe('msg-1');
  });

  it.each([
    [{ metadata: 'x' }, 'metadata: isObject'],
    [{ metadata: { ...META, occurred_at: '2025-03-01' } }, 'metadata.occurred_at: isTimestamp'],
    [{ metadata: { ...META, correlation_id: 'a b' } }, 'metadata.correlation_id: isSafeId'],
    [{ schema: 'Evals.Output' }, 'schema: isSchemaName'],
    [{ schema: 'evals.output.submitted.v0' }, 'schema: isSchemaName'],
    [{ type: 'evals output' }, 'type: isTypeName'],
    [{ version: '1' }, 'version: isVersion'],
    [{ version: 1.5 }, 'version: isVersion'],
  ])('refuses envelope %j', (patch, issue) => {
    const f = failureOf(decodeObject(SUBJECTS.OUTPUT_SUBMITTED, { ...SUBMITTED, ...patch }));
    expect(f.code).toBe('INVALID_ENVELOPE');
    expect(f.issues).toEqual([issue]);
  });

  it('refuses a schema that is not type.vVersion (SCHEMA_MISMATCH)', () => {
    const f = failureOf(decodeObject(SUBJECTS.OUTPUT_SUBMITTED, { ...SUBMITTED, schema: 'evals.output.submitted.v2' }));
    expect(f.code).toBe('SCHEMA_MISMATCH');
    expect(f.issues).toEqual(['schema: equalsTypeDotVersion']);
  });

  it('refuses a message whose type is not the subject it arrived on (SCHEMA_MISMATCH)', () => {
    const f = failureOf(decodeObject(SUBJECTS.RUN_SEALED, SUBMITTED));
    expect(f.code).toBe('SCHEMA_MISMATCH');
    expect(f.issues).toEqual(['type: equalsSubject']);
  });

  it("issue 30: reads an outbound message on its project's subject token, and only its own project's", () => {
    const result = encodeMessage(SUBJECTS.RESULT_RECORDED, 1, RESULT_RECORDED_V1_EXAMPLE, { ...META, project: 'team-a' });
    expect(result.metadata.project).toBe('team-a');
    const onToken = decodeMessage('evals.result.recorded.team-a', JSON.stringify(result));
    expect(onToken.ok && onToken.message).toEqual(result);
    // Another project's token, a token for a default message, and an inbound type with a token: refused.
    expect(failureOf(decodeMessage('evals.result.recorded.team-b', JSON.stringify(result))).issues).toEqual(['type: equalsSubject']);
    expect(failureOf(decodeMessage('evals.result.recorded', JSON.stringify(result))).issues).toEqual(['type: equalsSubject']);
    const plain = encodeMessage(SUBJECTS.RESULT_RECORDED, 1, RESULT_RECORDED_V1_EXAMPLE, META);
    expect(plain.metadata).not.toHaveProperty('project');
    expect(failureOf(decodeMessage('evals.result.recorded.default', JSON.stringify(plain))).code).toBe('SCHEMA_MISMATCH');
    expect(failureOf(decodeObject('evals.output.submitted.team-a', { ...SUBMITTED, metadata: { ...META, project: 'team-a' } })).code).toBe('SCHEMA_MISMATCH');
  });

  it('refuses a version with no decoder (UNKNOWN_SCHEMA), naming the known ones', () => {
    const f = failureOf(
      decodeObject(SUBJECTS.OUTPUT_SUBMITTED, { ...SUBMITTED, schema: 'evals.output.submitted.v2', version: 2 }),
    );
    expect(f.code).toBe('UNKNOWN_SCHEMA');
    expect(f.reason).toBe('no decoder for evals.output.submitted version 2 (known: v1)');
  });

  it('refuses a type nobody registered (UNKNOWN_SCHEMA)', () => {
    const f = failureOf(decodeObject('evals.other', { ...SUBMITTED, schema: 'evals.other.v1', type: 'evals.other' }));
    expect(f.code).toBe('UNKNOWN_SCHEMA');
    expect(f.reason).toBe('no decoder for evals.other version 1 (unknown message type)');
  });

  it('refuses prototype-reaching keys anywhere in data', () => {
    const text = JSON.stringify(SUBMITTED).replace('"run_id"', '"__proto__":{"polluted":true},"run_id"');
    const f = failureOf(decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, text));
    expect(f.code).toBe('INVALID_PAYLOAD');
    expect(f.issues).toEqual(['data: forbiddenKey']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('refuses hostile nesting without overflowing the stack', () => {
    const depth = 200_000;
    const text = JSON.stringify({ ...SUBMITTED, data: 'X' }).replace('"X"', `${'['.repeat(depth)}${']'.repeat(depth)}`);
    const r = decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, text);
    expect(r.ok).toBe(false);
    expect(['INVALID_PAYLOAD', 'MALFORMED_JSON']).toContain(!r.ok && r.code);
    const nested = JSON.stringify({ ...SUBMITTED, data: { ...OUTPUT_SUBMITTED_V1_EXAMPLE, extra: 'X' } }).replace(
      '"X"',
      `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
    );
    expect(failureOf(decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, nested)).issues).toEqual(['data: maxDepth']);
  });

  it('caps the reason at MAX_REASON_ISSUES issues and counts the rest', () => {
    const outputs = Array.from({ length: 30 }, () => ({}));
    const f = failureOf(
      decodeObject(SUBJECTS.RUN_REQUESTED, {
        schema: 'evals.run.requested.v1',
        type: 'evals.run.requested',
        version: 1,
        data: { ...RUN_REQUESTED_V1_EXAMPLE, outputs },
        metadata: META,
      }),
    );
    expect(f.issues).toHaveLength(60);
    expect(f.reason.split('; ')).toHaveLength(MAX_REASON_ISSUES + 1);
    expect(f.reason).toMatch(/; and 40 more$/);
  });
});

describe('decodeMessage never puts a candidate output (or any payload value) in a reason (D1)', () => {
  const CANARY = 'CANARY 7f3a: refund code 4242, secret agent answer';
  const CANARY_ID_LIKE = 'canary_secret_7f3a';
  const bigCanary = CANARY.repeat(Math.ceil((MAX_OUTPUT_BYTES + 1) / CANARY.length));
  const base = (data: unknown, patch: object = {}) => ({ ...SUBMITTED, data, ...patch });
  const run = (data: unknown) => ({
    schema: 'evals.run.requested.v1',
    type: 'evals.run.requested',
    version: 1,
    data,
    metadata: META,
  });

  const cases: Array<[string, string, string | Uint8Array]> = [
    ['missing run_id', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ case_id: 'c', output: CANARY }))],
    ['bad case_id', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ run_id: 'r', case_id: 'bad id', output: CANARY }))],
    ['canary as case_id', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ run_id: 'r', case_id: CANARY, output: 'x' }))],
    ['canary as run_id', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ run_id: CANARY, case_id: 'c', output: CANARY }))],
    ['output too large', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ run_id: 'r', case_id: 'c', output: bigCanary }))],
    ['output not a string', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ run_id: 'r', case_id: 'c', output: [CANARY] }))],
    ['output as an object', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ run_id: 'r', case_id: 'c', output: { text: CANARY } }))],
    ['unknown field holding it', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ ...OUTPUT_SUBMITTED_V1_EXAMPLE, note: CANARY }))],
    ['unknown key that is it', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ ...OUTPUT_SUBMITTED_V1_EXAMPLE, [CANARY]: 1 }))],
    ['unknown id-like key', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ ...OUTPUT_SUBMITTED_V1_EXAMPLE, [CANARY_ID_LIKE]: 1 }))],
    ['data is the output', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(CANARY))],
    ['canary in message_id', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(OUTPUT_SUBMITTED_V1_EXAMPLE, { metadata: { ...META, message_id: CANARY } }))],
    ['canary in occurred_at', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(OUTPUT_SUBMITTED_V1_EXAMPLE, { metadata: { ...META, occurred_at: CANARY } }))],
    ['canary as schema', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(OUTPUT_SUBMITTED_V1_EXAMPLE, { schema: CANARY }))],
    ['id-like canary as schema', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(OUTPUT_SUBMITTED_V1_EXAMPLE, { schema: `${CANARY_ID_LIKE}.v1` }))],
    ['id-like canary as type', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(OUTPUT_SUBMITTED_V1_EXAMPLE, { schema: `${CANARY_ID_LIKE}.v1`, type: CANARY_ID_LIKE }))],
    ['canary as version', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base(OUTPUT_SUBMITTED_V1_EXAMPLE, { version: CANARY }))],
    ['unknown envelope key', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ case_id: 'c' }, { extra: CANARY }))],
    ['not JSON', SUBJECTS.OUTPUT_SUBMITTED, CANARY],
    ['broken JSON around it', SUBJECTS.OUTPUT_SUBMITTED, `{"data": {"output": "${CANARY}"`],
    ['broken JSON after it', SUBJECTS.OUTPUT_SUBMITTED, `{"data": {"output": "${CANARY}" ${CANARY}}}`],
    ['invalid UTF-8 after it', SUBJECTS.OUTPUT_SUBMITTED, Buffer.concat([Buffer.from(`{"o":"${CANARY}`), Buffer.from([0xff])])],
    ['wrong subject', SUBJECTS.RUN_SEALED, JSON.stringify(base({ run_id: 'r', case_id: 'c', output: CANARY }))],
    ['forbidden key under it', SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(base({ ...OUTPUT_SUBMITTED_V1_EXAMPLE, wrap: {} })).replace('"wrap":{}', `"${CANARY}":{"__proto__":1}`)],
    ['inline outputs, duplicate case', SUBJECTS.RUN_REQUESTED, JSON.stringify(run({ ...RUN_REQUESTED_V1_EXAMPLE, outputs: [{ case_id: 'a', output: CANARY }, { case_id: 'a', output: CANARY }] }))],
    ['inline outputs, bad items', SUBJECTS.RUN_REQUESTED, JSON.stringify(run({ ...RUN_REQUESTED_V1_EXAMPLE, outputs: [CANARY, { output: CANARY }, { case_id: CANARY, output: CANARY }, { case_id: 'z', output: CANARY, [CANARY]: CANARY }] }))],
    ['inline output too large', SUBJECTS.RUN_REQUESTED, JSON.stringify(run({ ...RUN_REQUESTED_V1_EXAMPLE, outputs: [{ case_id: 'a', output: bigCanary }] }))],
    ['outputs as an object keyed by it', SUBJECTS.RUN_REQUESTED, JSON.stringify(run({ ...RUN_REQUESTED_V1_EXAMPLE, outputs: { [CANARY]: CANARY } }))],
    [
      'free text in metrics',
      SUBJECTS.RESULT_RECORDED,
      JSON.stringify({
        schema: 'evals.result.recorded.v1',
        type: 'evals.result.recorded',
        version: 1,
        data: { ...RESULT_RECORDED_V1_EXAMPLE, metrics: { ...RESULT_RECORDED_V1_EXAMPLE.metrics, sample: CANARY, [CANARY]: 1, [CANARY_ID_LIKE]: CANARY } },
        metadata: META,
      }),
    ],
  ];

  it.each(cases)('%s', (_name, subject, payload) => {
    const r = decodeMessage(subject, payload);
    expect(r.ok).toBe(false);
    const serialised = JSON.stringify(r);
    for (const needle of [CANARY, 'CANARY', '7f3a', '4242', 'refund code', 'secret', CANARY_ID_LIKE]) {
      expect(serialised).not.toContain(needle);
    }
  });

  it('holds for random outputs and random invalid payloads (property)', () => {
    const marker = fc.string({ minLength: 6, maxLength: 40 }).map((s) => `QZX${s}QZX`);
    fc.assert(
      fc.property(marker, fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), (m, junk, bad) => {
        const data = { ...junk, output: m, ...(bad ? { run_id: m } : {}), [m]: m };
        const r = decodeObject(SUBJECTS.OUTPUT_SUBMITTED, base(data));
        expect(r.ok).toBe(false);
        expect(JSON.stringify(r)).not.toContain('QZX');
      }),
      { numRuns: 300 },
    );
  });
});

describe('decodeMessage never throws', () => {
  const codes = new Set<string>(DECODE_ERROR_CODES);
  const subjects = fc.constantFrom(...Object.values(SUBJECTS), 'other.subject', '');

  function wellFormedResult(r: DecodeResult): void {
    expect(typeof r.ok).toBe('boolean');
    if (!r.ok) {
      expect(codes.has(r.code)).toBe(true);
      expect(r.code).not.toBe('DECODER_ERROR');
      expect(typeof r.reason).toBe('string');
    }
  }

  it('on arbitrary bytes', () => {
    fc.assert(
      fc.property(subjects, fc.uint8Array({ maxLength: 512 }), (s, bytes) => {
        wellFormedResult(decodeMessage(s, bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it('on arbitrary strings and JSON values', () => {
    fc.assert(
      fc.property(subjects, fc.oneof(fc.string(), fc.json()), (s, text) => {
        wellFormedResult(decodeMessage(s, text));
      }),
      { numRuns: 2000 },
    );
  });

  it('on well-formed envelopes with arbitrary data, for every registered schema', () => {
    const defs = fc.constantFrom(...MESSAGE_DEFINITIONS);
    const data = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.string(), fc.jsonValue()),
      defs.chain((d) =>
        fc.record({ key: fc.constantFrom(...Object.keys(d.example)), value: fc.jsonValue() }).map(({ key, value }) => ({
          ...(d.example as object),
          [key]: value,
        })),
      ),
    );
    fc.assert(
      fc.property(defs, data, (d, payload) => {
        const env = { schema: d.schema, type: d.type, version: d.version, data: payload, metadata: META };
        wellFormedResult(decodeMessage(d.type, JSON.stringify(env)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('encodeMessage', () => {
  it('builds the wire object, schema = type.vVersion', () => {
    const wire = encodeMessage('evals.output.submitted', 1, OUTPUT_SUBMITTED_V1_EXAMPLE, META);
    expect(wire).toEqual(SUBMITTED);
    expect(wire.schema).toBe(`${wire.type}.v${wire.version}`);
    expect(JSON.parse(Buffer.from(serializeMessage(wire)).toString('utf8'))).toEqual(SUBMITTED);
  });

  it('validates outbound data at the edge too', () => {
    const bad = { ...RESULT_RECORDED_V1_EXAMPLE, score: 2 };
    expect(() => encodeMessage('evals.result.recorded', 1, bad, META)).toThrow(
      expect.objectContaining({ code: 'INVALID_PAYLOAD', reason: 'data.score: isNumberInRange' }),
    );
  });

  it('requires full metadata on the way out: correlation and causation are ours to know', () => {
    const { correlation_id: _c, ...partial } = META;
    expect(() =>
      encodeMessage('evals.result.recorded', 1, RESULT_RECORDED_V1_EXAMPLE, partial as typeof META),
    ).toThrow(expect.objectContaining({ code: 'INVALID_ENVELOPE', reason: 'metadata.correlation_id: isSafeId' }));
  });

  it('refuses an unregistered version', () => {
    expect(() => encodeMessage('evals.run.sealed', 2 as 1, { run_id: 'r' }, META)).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_SCHEMA' }),
    );
  });

  it('refuses an output over the limit with OUTPUT_TOO_LARGE and never quotes it', () => {
    const output = 'SECRET'.repeat(MAX_OUTPUT_BYTES);
    let error: unknown;
    try {
      encodeMessage('evals.output.submitted', 1, { run_id: 'r', case_id: 'c', output }, META);
    } catch (e) {
      error = e;
    }
    expect(error).toEqual(expect.objectContaining({ code: 'OUTPUT_TOO_LARGE' }));
    expect(String((error as Error).message)).not.toContain('SECRET');
  });

  it('refuses a message over MAX_MESSAGE_BYTES as a whole', () => {
    const output = 'a'.repeat(MAX_OUTPUT_BYTES);
    const outputs = Array.from({ length: Math.ceil(MAX_MESSAGE_BYTES / MAX_OUTPUT_BYTES) + 1 }, (_, i) => ({ case_id: `c${i}`, output }));
    expect(() =>
      encodeMessage('evals.run.requested', 1, { ...RUN_REQUESTED_V1_EXAMPLE, outputs }, META),
    ).toThrow(expect.objectContaining({ code: 'MESSAGE_TOO_LARGE' }));
  });
});
