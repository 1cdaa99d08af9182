import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { ALL_SUBJECTS, MAX_MESSAGE_BYTES, type MessageDefinition } from '@evals/contracts';

/*
 * Hostile inputs for the bus edge and the HTTP edge (issue 18, part 3), generated with fast-check: wrong
 * types, extra and missing fields, prototype keys, huge and deep values, invalid UTF-8, NUL, lone surrogates
 * and oversize outputs. A generated input is a JSON-like value with "splices" - placeholders replaced by raw
 * text or raw bytes after serialisation - so that what JSON.stringify cannot produce (a 100 000-deep
 * nesting, a `__proto__` key, a duplicate key, invalid UTF-8, a bare NaN) still reaches the edge as bytes.
 */

/** Put into candidate outputs: no answer, reason or dead letter may ever contain it (D1). */
export const OUTPUT_CANARY = 'CANARY-output-5be1d0';

/** The seed of a run: FUZZ_SEED replays a failure; otherwise a fresh one, printed by the spec. */
export function fuzzSeed(): number {
  const fromEnv = process.env['FUZZ_SEED'];
  if (fromEnv !== undefined && fromEnv !== '') {
    const n = Number(fromEnv);
    if (!Number.isSafeInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${fromEnv}`);
    return n | 0;
  }
  return (Date.now() ^ (process.pid << 12)) | 0;
}

/** A spliced piece: raw JSON-ish text, or raw bytes (inside a string literal) that are not UTF-8. */
export type Splice = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'bytes'; readonly bytes: readonly number[] };

const SPLICE = Symbol('splice');
export interface Spliced {
  readonly [SPLICE]: Splice;
}

function spliced(s: Splice): Spliced {
  return { [SPLICE]: s };
}

const deep = (open: string, leaf: string, close: string) => (depth: number) => open.repeat(depth) + leaf + close.repeat(depth);

/** Raw texts that JSON.stringify would never write. */
const RAW_TEXTS: readonly string[] = [
  deep('{"a":', '0', '}')(17),
  deep('{"a":', '0', '}')(1_000),
  deep('{"a":', '0', '}')(100_000),
  deep('[', '', ']')(100_000),
  deep('[{"x":', '1', '}]')(5_000),
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"prototype":1}',
  '[{"__proto__":null}]',
  '{"a":1,"a":2}',
  '1e999',
  '-1e999',
  '123456789012345678901234567890',
  '-0',
  '0.1e-400',
  '"\\u0000"',
  '"\\ud800"',
  '"x\\udfffy"',
  '"\\ud83d\\ude00"',
  'NaN',
  'undefined',
  'Infinity',
  '[1,]',
  '{"a":1,}',
  "'single'",
  '"unterminated',
  '"tab\there"',
  '',
];

/** Byte sequences that are not UTF-8 (a lone continuation, an overlong `/`, an encoded surrogate, a truncated rune, 0xFF). */
const BAD_UTF8: ReadonlyArray<readonly number[]> = [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff], [0xfe, 0xff], [0xc3, 0x28], [0xf8, 0x88, 0x80, 0x80, 0x80]];

export const rawSplice: fc.Arbitrary<Spliced> = fc.oneof(
  fc.constantFrom(...RAW_TEXTS).map((text) => spliced({ kind: 'text', text })),
  fc.constantFrom(...BAD_UTF8).map((bytes) => spliced({ kind: 'bytes', bytes })),
);

const SPECIAL_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\uffff',
  '\ufeff',
  '\u202e',
  '__proto__',
  'constructor',
  'prototype',
  '../../x',
  '%00',
  "'; DROP TABLE runs; --",
  '${7*7}',
  '{{7*7}}',
  '\r\n\r\nX-Injected: 1',
  '-rf',
  'true',
  '1',
  'null',
  'CON',
];

/** Strings that stress every layer: control characters, lone surrogates, path and injection text, huge ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom('\u0000', '\ud800', '\udc00', '\u0007', '\u001b'), fc.string({ maxLength: 8 })).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.constantFrom(201, 4_097, 70_000).map((n) => 'a'.repeat(n)) },
);

/** Numbers a field of another type, or a count, should refuse. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(-1, 0, 1.5, -0, 2 ** 53, 2 ** 31, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '', ' ', 'a.b', '$where', 'toString', 'hasOwnProperty', 'valueOf', '\u0000', '\ud800'),
  fc.string({ maxLength: 12 }),
);

/** Any JSON value with hostile leaves, objects with hostile keys, and splices. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: hostileString },
    { weight: 3, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: rawSplice },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 2, arbitrary: fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 }).map((entries) => defineAll(entries)) },
  ),
})).value;

/** An object with exactly these own keys (`__proto__` included, as data, not as the prototype). */
function defineAll(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * A mutation of a valid object (a message's `data`, an HTTP body): fields dropped, given hostile values or
 * raw splices, extra fields, a nested field replaced, or the whole object replaced.
 */
export type Mutation =
  | { readonly op: 'drop'; readonly key: string }
  | { readonly op: 'set'; readonly key: string; readonly value: unknown }
  | { readonly op: 'nested'; readonly key: string; readonly inner: string; readonly value: unknown }
  | { readonly op: 'replace'; readonly value: unknown };

export function mutations(keys: readonly string[], stringFields: readonly string[] = []): fc.Arbitrary<Mutation[]> {
  const key = keys.length > 0 ? fc.oneof(fc.constantFrom(...keys), hostileKey) : hostileKey;
  const op: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 2, arbitrary: fc.record({ op: fc.constant('drop' as const), key }) },
    { weight: 5, arbitrary: fc.record({ op: fc.constant('set' as const), key, value: hostileValue }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('nested' as const), key, inner: fc.oneof(hostileKey, fc.constantFrom('0', 'output', 'case_id', 'id', 'input', 'expected')), value: hostileValue }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('replace' as const), value: hostileValue }) },
    ...(stringFields.length > 0
      ? [{ weight: 1, arbitrary: fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...stringFields), value: oversizeOutput }) }]
      : []),
  );
  return fc.array(op, { minLength: 1, maxLength: 4 });
}

/** Outputs just over the 512 KiB limit, in ASCII and in 4-byte runes, with the canary. */
export const oversizeOutput: fc.Arbitrary<string> = fc.constantFrom(
  OUTPUT_CANARY + 'x'.repeat(512 * 1024),
  OUTPUT_CANARY + '\u{1F600}'.repeat(131_072),
);

export function applyMutations(base: unknown, list: readonly Mutation[]): unknown {
  let value: unknown = clone(base);
  for (const m of list) {
    if (m.op === 'replace') {
      value = m.value;
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) value = {};
    const obj = value as Record<string, unknown>;
    if (m.op === 'drop') delete obj[m.key];
    else if (m.op === 'set') Object.defineProperty(obj, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
    else {
      const current = Object.prototype.hasOwnProperty.call(obj, m.key) ? obj[m.key] : undefined;
      const target = Array.isArray(current) ? clone(current[0]) : clone(current);
      const inner = typeof target === 'object' && target !== null ? (target as Record<string, unknown>) : {};
      Object.defineProperty(inner, m.inner, { value: m.value, enumerable: true, writable: true, configurable: true });
      obj[m.key] = Array.isArray(current) ? [inner, ...current.slice(1)] : inner;
    }
  }
  return value;
}

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (typeof value !== 'object' || value === null || SPLICE in value) return value;
  return defineAll(Object.entries(value).map(([k, v]) => [k, clone(v)] as const));
}

/**
 * The bytes of `value` as JSON, splices put in place: a text splice replaces the value, a bytes splice
 * becomes a string literal holding those bytes.
 */
export function render(value: unknown): Buffer {
  const pieces: Splice[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null && SPLICE in v) {
      pieces.push((v as Spliced)[SPLICE]);
      return `\u0001splice${pieces.length - 1}\u0001`;
    }
    return v;
  }) ?? 'null';
  if (pieces.length === 0) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let rest = text;
  pieces.forEach((piece, i) => {
    const marker = `"\\u0001splice${i}\\u0001"`;
    const at = rest.indexOf(marker);
    parts.push(Buffer.from(rest.slice(0, at), 'utf8'));
    parts.push(piece.kind === 'text' ? Buffer.from(piece.text, 'utf8') : Buffer.from([0x22, ...piece.bytes, 0x22]));
    rest = rest.slice(at + marker.length);
  });
  parts.push(Buffer.from(rest, 'utf8'));
  return Buffer.concat(parts);
}

/** Whole-body damage after rendering: truncated, a BOM, bytes that are not UTF-8, or not JSON at all. */
export type WireDamage = { readonly op: 'none' } | { readonly op: 'truncate'; readonly at: number } | { readonly op: 'bom' } | { readonly op: 'badUtf8'; readonly at: number; readonly bytes: readonly number[] } | { readonly op: 'replace'; readonly body: string };

export const wireDamage: fc.Arbitrary<WireDamage> = fc.oneof(
  { weight: 24, arbitrary: fc.constant({ op: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'bom' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('badUtf8' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.constantFrom(...BAD_UTF8) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('replace' as const), body: fc.constantFrom('', ' ', 'null', '[]', '"text"', '42', 'true', '{', '}', '{}{}', '\u0000', 'a=1&b=2', '<xml/>') }) },
);

export function damage(bytes: Buffer, d: WireDamage): Buffer {
  switch (d.op) {
    case 'none':
      return bytes;
    case 'truncate':
      return bytes.subarray(0, Math.floor(bytes.length * d.at));
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    case 'badUtf8': {
      const at = Math.floor(bytes.length * d.at);
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(d.bytes), bytes.subarray(at)]);
    }
    case 'replace':
      return Buffer.from(d.body, 'utf8');
  }
}

/** One message as a consumer receives it: the subject it arrived on and its bytes. */
export interface HostileBusMessage {
  readonly subject: string;
  /** The definition it was derived from. */
  readonly schema: string;
  readonly bytes: Buffer;
}

const META = { message_id: 'msg-hostile-1', correlation_id: 'corr-1', causation_id: 'cause-1', occurred_at: '2025-03-01T12:00:00.000Z' };

/**
 * Bus messages derived from every registered message's example: its data mutated (always), sometimes its
 * envelope and metadata too, sometimes delivered on another subject, sometimes damaged on the wire, and now
 * and then padded past MAX_MESSAGE_BYTES.
 */
export function hostileBusMessage(definitions: readonly MessageDefinition[]): fc.Arbitrary<HostileBusMessage> {
  return fc.constantFrom(...definitions).chain((def) => {
    const example = def.example as Record<string, unknown>;
    const stringFields = Object.keys(example).filter((k) => k === 'output');
    return fc
      .record({
        data: mutations(Object.keys(example), stringFields),
        envelope: sometimes(mutations(['schema', 'type', 'version', 'metadata'])),
        metadata: sometimes(mutations(Object.keys(META))),
        subject: fc.oneof({ weight: 10, arbitrary: fc.constant(def.type as string) }, { weight: 1, arbitrary: fc.constantFrom(...ALL_SUBJECTS) }, { weight: 1, arbitrary: hostileString }),
        wire: wireDamage,
        oversize: fc.oneof({ weight: 400, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      })
      .map((m) => {
        const base = { schema: def.schema, type: def.type, version: def.version, data: applyMutations(example, m.data), metadata: m.metadata === null ? META : applyMutations(META, m.metadata) };
        const envelope = m.envelope === null ? base : applyMutations(base, m.envelope);
        const padded = m.oversize && typeof envelope === 'object' && envelope !== null ? { ...envelope, pad: 'x'.repeat(MAX_MESSAGE_BYTES) } : envelope;
        return { subject: m.subject, schema: def.schema, bytes: damage(render(padded), m.wire) };
      });
  });
}

/** One time in seven: the rest of the campaign should get past the envelope to the payload. */
function sometimes<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
}

/** Resident set size of a process in bytes (Linux /proc), or of this one. */
export function rssOf(pid?: number): number {
  if (pid === undefined) return process.memoryUsage().rss;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb[1]) * 1024;
}

/**
 * The JS heap in use after a full garbage collection: what a leak would grow, unlike RSS, which keeps pages
 * the collector has freed. Uses V8's gc function without needing node --expose-gc.
 */
export function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  let gc: () => void;
  try {
    gc = vm.runInNewContext('gc') as () => void;
  } finally {
    // Lowered again at once: a later test in the same Jest worker (idle-gc.spec.ts) checks that new contexts get no gc.
    v8.setFlagsFromString('--no-expose-gc');
  }
  gc();
  return process.memoryUsage().heapUsed;
}

/** Counts of one campaign, printed and written to docs/reliability.md. */
export class Tally {
  tried = 0;
  accepted = 0;
  readonly refused = new Map<string, number>();
  serverErrors = 0;
  crashes = 0;

  refuse(code: string): void {
    this.refused.set(code, (this.refused.get(code) ?? 0) + 1);
  }

  get refusedTotal(): number {
    return [...this.refused.values()].reduce((a, b) => a + b, 0);
  }

  summary(): string {
    const codes = [...this.refused.entries()].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c}=${n}`).join(' ');
    return `tried=${this.tried} accepted=${this.accepted} refused_by_code=${this.refusedTotal} 5xx=${this.serverErrors} crashes=${this.crashes} [${codes}]`;
  }
}
