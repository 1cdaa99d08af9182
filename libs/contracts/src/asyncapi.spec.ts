import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { Type } from 'class-transformer';
import { Allow, IsOptional, IsString, ValidateBy, ValidateNested } from 'class-validator';
import fc from 'fast-check';
import { buildAsyncApiDocument, renderAsyncApiJson } from './asyncapi';
import { SchemaGenerationError } from './asyncapi-schema';
import { ASYNCAPI_DOC_PATH } from './asyncapi.script';
import { payloadValidators } from './asyncapi.testing';
import { decodeMessage } from './codec';
import { NATS_MSG_ID_HEADER } from './envelope';
import { defineMessage, type MessageDefinition } from './message-definition';
import { MESSAGE_DEFINITIONS } from './registry';
import { ALL_SUBJECTS, INBOUND_SUBJECTS, SUBJECTS } from './subjects';

/** Issue 16 part 3: the bus contract as an AsyncAPI 3 document, generated from the contract classes. */
const doc = buildAsyncApiDocument();
const validatorOf = payloadValidators(doc);
const DEFINITIONS = MESSAGE_DEFINITIONS as unknown as readonly MessageDefinition[];
const DOCS = join(__dirname, '..', '..', '..', 'docs');

describe('the AsyncAPI document of the bus contract', () => {
  it('is a valid AsyncAPI 3 document for @asyncapi/parser (no error, no warning)', async () => {
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
    const serious = diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('/')}`);
    expect(serious).toEqual([]);
    expect(document).toBeDefined();
    expect(document!.version()).toBe('3.0.0');
    // The parser's model, not our object: every subject is a channel, every version a message of it.
    const channels = document!.channels().all().map((c) => c.address()).sort();
    expect(channels).toEqual([...ALL_SUBJECTS].sort());
    const messages = document!.allMessages().all().map((m) => m.name()).sort();
    expect(messages).toEqual(DEFINITIONS.map((d) => d.schema).sort());
    for (const op of document!.operations().all()) {
      const subject = op.channels().all()[0]!.address()!;
      expect(op.action()).toBe((INBOUND_SUBJECTS as readonly string[]).includes(subject) ? 'receive' : 'send');
    }
  });

  it('gives every message the envelope {schema, type, version, data, metadata} and the Nats-Msg-Id header', () => {
    for (const def of DEFINITIONS) {
      const message = doc.components.messages[def.schema] as { payload: any; headers: { $ref: string } };
      expect(message.payload.required).toEqual(['schema', 'type', 'version', 'data', 'metadata']);
      expect(message.payload.properties.schema.const).toBe(def.schema);
      expect(message.payload.properties.type.const).toBe(def.type);
      expect(message.payload.properties.version.const).toBe(def.version);
      expect(message.payload.properties.data.$ref).toMatch(/^#\/components\/schemas\/[A-Za-z0-9]+$/);
      expect(message.payload.properties.metadata.$ref).toBe(
        def.direction === 'inbound' ? '#/components/schemas/InboundMetadata' : '#/components/schemas/MessageMetadata',
      );
      const headers = doc.components.schemas[message.headers.$ref.split('/').pop()!] as any;
      expect(headers.required).toEqual([NATS_MSG_ID_HEADER]);
    }
  });

  it('is what docs/asyncapi.json holds (run `npm run docs:asyncapi` after changing a contract)', () => {
    const committed = readFileSync(ASYNCAPI_DOC_PATH, 'utf8');
    if (committed !== renderAsyncApiJson()) {
      throw new Error('docs/asyncapi.json is stale: run `npm run docs:asyncapi` and commit the result');
    }
  });

  it('is deterministic: two builds are byte-identical', () => {
    expect(renderAsyncApiJson()).toBe(renderAsyncApiJson());
  });

  it('validates the example of every message, as carried in the document', () => {
    for (const def of DEFINITIONS) {
      const example = (doc.components.messages[def.schema] as { examples: Array<{ payload: unknown }> }).examples[0]!.payload;
      const validate = validatorOf(def.schema);
      expect(validate(example) ? 'valid' : validate.errors).toBe('valid');
    }
  });
});

describe('docs/contracts.md against the generated schemas', () => {
  const blocks = [...readFileSync(join(DOCS, 'contracts.md'), 'utf8').matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');

  it('every JSON example validates against the schema of its message', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(DEFINITIONS.length);
    for (const block of blocks) {
      const message = JSON.parse(block) as { schema: string };
      const validate = validatorOf(message.schema);
      expect({ schema: message.schema, errors: validate(message) ? null : validate.errors }).toEqual({ schema: message.schema, errors: null });
    }
  });

  it('the schemas refuse what the decoder refuses field by field (a wrong type, an unknown inbound field, a missing field)', () => {
    for (const def of DEFINITIONS) {
      const validate = validatorOf(def.schema);
      const base = { schema: def.schema, type: def.type, version: def.version, metadata: { message_id: 'm1', occurred_at: '2025-03-01T12:00:00Z', correlation_id: 'c', causation_id: 'c' } };
      const data = def.example as Record<string, unknown>;
      const firstKey = Object.keys(data)[0]!;
      expect(validate({ ...base, data: { ...data, [firstKey]: { not: 'a scalar' } } })).toBe(false);
      expect(validate({ ...base, data: Object.fromEntries(Object.entries(data).slice(1)) })).toBe(false);
      expect(validate({ ...base, data: { ...data, [firstKey]: undefined } })).toBe(false);
      if (def.direction === 'inbound') expect(validate({ ...base, data: { ...data, surplus: 1 } })).toBe(false);
    }
  });
});

describe('the schemas never refuse what the decoder accepts', () => {
  // fast-check mutates each example (a field dropped, replaced by any JSON value, nulled, an extra field);
  // whenever the decoder still accepts the message, its schema must accept it too.
  it.each(DEFINITIONS.map((d) => [d.schema, d] as const))('%s', (_schema, def) => {
    const validate = validatorOf(def.schema);
    const example = def.example as Record<string, unknown>;
    const keys = Object.keys(example);
    const mutation = fc.oneof(
      fc.record({ op: fc.constant('drop' as const), key: fc.constantFrom(...keys) }),
      fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...keys, 'extra'), value: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(null)) }),
    );
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(mutation, { maxLength: 3 }), (mutations) => {
        const data: Record<string, unknown> = { ...example };
        for (const m of mutations) {
          if (m.op === 'drop') delete data[m.key];
          else data[m.key] = m.value;
        }
        const envelope = { schema: def.schema, type: def.type, version: def.version, data, metadata: { message_id: 'm1', correlation_id: 'c1', causation_id: 'c1', occurred_at: '2025-03-01T12:00:00Z' } };
        const decoded = decodeMessage(def.type, JSON.stringify(envelope));
        if (decoded.ok) {
          accepted++;
          // JSON.stringify drops undefined, exactly as the wire does. A batch the decoder took invalid outputs
          // out of (issue 28) is refused by its schema as sent, and matches it once they are out.
          const sent = JSON.parse(JSON.stringify(envelope));
          if (decoded.refused?.length) {
            expect(validate(sent)).toBe(false);
            const left = decoded.message.data as unknown as { outputs: unknown[] };
            if (left.outputs.length > 0) expect(validate({ ...sent, data: left }) ? 'valid' : validate.errors).toBe('valid');
          } else {
            expect(validate(sent) ? 'valid' : validate.errors).toBe('valid');
          }
        }
      }),
      { numRuns: 400 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});

describe('a message version without a complete schema fails the generation', () => {
  function withExtra(dto: new () => object): readonly MessageDefinition[] {
    const extra = defineMessage({ type: SUBJECTS.RUN_SEALED, version: 99, direction: 'inbound', dto, example: {} });
    return [...DEFINITIONS, extra as unknown as MessageDefinition];
  }

  it('a DTO with no validated property', () => {
    class NoRules {
      run_id!: string;
    }
    expect(() => buildAsyncApiDocument({ definitions: withExtra(NoRules) })).toThrow(/NoRules declares no validated property/);
  });

  it('a constraint the converter has no JSON Schema for', () => {
    class Custom {
      @ValidateBy({ name: 'isPalindrome', validator: { validate: () => true } })
      run_id!: string;
    }
    expect(() => buildAsyncApiDocument({ definitions: withExtra(Custom) })).toThrow(/Custom\.run_id: constraint isPalindrome has no JSON Schema mapping/);
  });

  it('a free-form (@Allow) property with no schema written for it', () => {
    class FreeForm {
      @IsString()
      run_id!: string;

      @Allow()
      anything!: unknown;
    }
    expect(() => buildAsyncApiDocument({ definitions: withExtra(FreeForm) })).toThrow(SchemaGenerationError);
  });

  it('a property that only says it is optional (it would accept anything)', () => {
    class OnlyOptional {
      @IsString()
      run_id!: string;

      @IsOptional()
      note?: string;
    }
    expect(() => buildAsyncApiDocument({ definitions: withExtra(OnlyOptional) })).toThrow(/OnlyOptional\.note has no constraint/);
  });

  it('a nested object without its @Type class', () => {
    class Untyped {
      @ValidateNested()
      inner!: object;
    }
    expect(() => buildAsyncApiDocument({ definitions: withExtra(Untyped) })).toThrow(/@ValidateNested without a @Type class/);
  });

  it('a subject with no registered version', () => {
    expect(() => buildAsyncApiDocument({ definitions: DEFINITIONS.filter((d) => d.type !== SUBJECTS.RUN_SEALED) })).toThrow(/evals\.run\.sealed has no registered message version/);
  });

  it('and a well-formed new version is picked up with its own schema, beside v1', () => {
    class Inner {
      @IsString()
      label!: string;
    }
    class SealedV2 {
      @IsString()
      run_id!: string;

      @IsOptional()
      @ValidateNested()
      @Type(() => Inner)
      inner?: Inner;
    }
    const next = buildAsyncApiDocument({ definitions: withExtra(SealedV2) });
    expect(Object.keys((next.channels[SUBJECTS.RUN_SEALED] as { messages: object }).messages)).toEqual(['evals.run.sealed.v1', 'evals.run.sealed.v99']);
    expect(next.components.schemas['SealedV2']).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['run_id'],
      properties: { run_id: { type: 'string' }, inner: { anyOf: [{ $ref: '#/components/schemas/Inner' }, { type: 'null' }] } },
    });
  });
});
