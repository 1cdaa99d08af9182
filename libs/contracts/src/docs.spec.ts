import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeMessage } from './codec';
import { DECODE_ERROR_CODES } from './contract-error';
import { MAX_INLINE_OUTPUTS, MAX_MESSAGE_BYTES, MAX_OUTPUT_BYTES } from './limits';
import { MESSAGE_DEFINITIONS } from './registry';

/** docs/contracts.md is what other teams build against: its examples must decode, and it must cover everything. */
const DOC = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'contracts.md'), 'utf8');
const JSON_BLOCKS = [...DOC.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');

describe('docs/contracts.md', () => {
  it('has one example message per registered schema, each decoding as-is', () => {
    const schemas = JSON_BLOCKS.map((block) => {
      const parsed = JSON.parse(block) as { schema: string; type: string };
      const r = decodeMessage(parsed.type, block);
      expect(r.ok ? 'ok' : r.reason).toBe('ok');
      return parsed.schema;
    });
    expect(schemas.sort()).toEqual(MESSAGE_DEFINITIONS.map((d) => d.schema).sort());
  });

  it('shows the examples the library exports', () => {
    for (const block of JSON_BLOCKS) {
      const parsed = JSON.parse(block) as { schema: string; data: unknown };
      const def = MESSAGE_DEFINITIONS.find((d) => d.schema === parsed.schema);
      expect(parsed.data).toEqual(def?.example);
    }
  });

  it('documents every dead-letter code and the limits', () => {
    for (const code of DECODE_ERROR_CODES) expect(DOC).toContain(`| \`${code}\``);
    expect(DOC).toContain(MAX_OUTPUT_BYTES.toLocaleString('en-US'));
    expect(DOC).toContain(MAX_MESSAGE_BYTES.toLocaleString('en-US'));
    expect(DOC).toContain(MAX_INLINE_OUTPUTS.toLocaleString('en-US'));
  });
});
