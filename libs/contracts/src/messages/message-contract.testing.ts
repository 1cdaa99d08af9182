import { decodeMessage, type DecodeResult, encodeMessage } from '../codec';
import type { MessageDefinition } from '../message-definition';

/** Shared by the per-message specs: the checks every message contract must pass. Test-only. */

export const META = {
  message_id: 'msg-0001',
  correlation_id: 'corr-0001',
  causation_id: 'cause-0001',
  occurred_at: '2025-03-01T12:00:00.000Z',
};

export function envelopeOf(def: MessageDefinition, data: unknown, metadata: object = META): Record<string, unknown> {
  return { schema: def.schema, type: def.type, version: def.version, data, metadata };
}

export function decodeData(def: MessageDefinition, data: unknown): DecodeResult {
  return decodeMessage(def.type, JSON.stringify(envelopeOf(def, data)));
}

export function issuesOf(result: DecodeResult): string[] {
  return result.ok ? [] : result.issues.map((i) => `${i.field}: ${i.constraint}`);
}

function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

export function without(obj: object, key: string): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
  delete copy[key];
  return copy;
}

export interface ContractCases {
  /** Required fields of `data`; removing any one is INVALID_PAYLOAD naming it. */
  readonly required: readonly string[];
  /** Field -> a value of the wrong type or format, and the constraint expected. */
  readonly wrong: ReadonlyArray<readonly [field: string, value: unknown, constraint: string]>;
}

export function describeContract(def: MessageDefinition, cases: ContractCases): void {
  const example = def.example as Record<string, unknown>;

  describe(`${def.schema}: shared contract checks`, () => {
    it('accepts its example and returns the same data', () => {
      const r = decodeData(def, example);
      expect(issuesOf(r)).toEqual([]);
      expect(r.ok && r.message.data).toEqual(example);
      expect(r.ok && r.message.schema).toBe(def.schema);
    });

    it.each(cases.required.map((f) => [f]))('refuses a message without %s, naming the field', (field) => {
      const r = decodeData(def, without(example, field));
      expect(r.ok).toBe(false);
      expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
      expect(issuesOf(r)).toEqual([`data.${field}: required`]);
      expect(!r.ok && r.reason).toContain(`data.${field}`);
    });

    it.each(cases.wrong.map(([f, v, c]) => [f, shown(v), v, c]))(
      'refuses %s = %s (%#)',
      (field, _shown, value, constraint) => {
        const r = decodeData(def, { ...example, [field as string]: value });
        expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
        expect(issuesOf(r)).toContain(`data.${field as string}: ${constraint as string}`);
      },
    );

    it.each([null, 'text', 42, [], true])('refuses data = %j', (data) => {
      const r = decodeData(def, data);
      expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
      expect(issuesOf(r)).toEqual(['data: isObject']);
    });

    if (def.direction === 'inbound') {
      it('refuses an unknown field in data (inbound: we own the schema), without naming it', () => {
        const r = decodeData(def, { ...example, baseline_runid: 'typo-of-a-real-field' });
        expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
        expect(issuesOf(r)).toEqual(['data: unknownField']);
        expect(!r.ok && r.reason).not.toContain('baseline_runid');
      });
    } else {
      it('drops an unknown field in data when decoding (outbound: tolerant reader)', () => {
        const r = decodeData(def, { ...example, added_later: 1 });
        expect(issuesOf(r)).toEqual([]);
        expect(r.ok && r.message.data).toEqual(example);
      });
    }

    it('refuses an unknown field when encoding', () => {
      expect(() =>
        encodeMessage(def.type, def.version as never, { ...example, added_later: 1 } as never, META),
      ).toThrow(expect.objectContaining({ code: 'INVALID_PAYLOAD' }));
    });

    it('round-trips through encodeMessage and decodeMessage', () => {
      const wire = encodeMessage(def.type, def.version as never, example as never, META);
      expect(wire).toEqual(envelopeOf(def, example));
      const r = decodeMessage(def.type, Buffer.from(JSON.stringify(wire)));
      expect(r.ok && r.message).toEqual(wire);
    });
  });
}
