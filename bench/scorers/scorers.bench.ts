/**
 * Micro-benchmark of the deterministic scorers (S1) on 1 KiB outputs, half passing and half failing.
 * Run: `npm run bench:scorers`. Prints numbers only, asserts nothing (docs/testing.md: speed is measured
 * here, never in unit tests).
 *
 * For each scorer configuration: warm up, then score the outputs round-robin for at least 0.5 s and report
 * cases per second. As a raw baseline, in the same run and on the same outputs, a plain
 * `String.prototype.includes` loop (an absent needle, `order #99999`, whose first letter is frequent) is
 * measured; `ratio` is scorer cases/s divided by baseline cases/s.
 */
import { validateScorerSpec, type CompiledDeterministicScorer } from '@evals/scorers';

const KIB = 1024;
const OUTPUTS_PER_CASE = 64;
const WARMUP_MS = 200;
const MEASURE_MS = 500;

/** Deterministic pseudo-random generator (mulberry32), so every run benchmarks the same outputs. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the agent answered customer order refund shipping invoice status ticket priority queue resolved pending'.split(' ');

/** Prose of exactly `length` characters. */
function prose(random: () => number, length: number): string {
  let s = '';
  while (s.length < length) s += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return s.slice(0, length);
}

/** A JSON object of about `length` characters. */
function jsonObject(random: () => number, length: number): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  let i = 0;
  while (JSON.stringify(obj).length < length - 40) {
    obj[`field_${i}`] = i % 3 === 0 ? Math.floor(random() * 1e6) / 100 : i % 3 === 1 ? prose(random, 20).trim() : [i, true, null];
    i++;
  }
  return obj;
}

function shuffledKeys(obj: Record<string, unknown>, random: () => number): Record<string, unknown> {
  const keys = Object.keys(obj).sort(() => random() - 0.5);
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = obj[k];
  return out;
}

interface BenchCase {
  readonly title: string;
  readonly spec: Record<string, unknown>;
  readonly expected?: unknown;
  /** 1 KiB outputs; even indexes are built to pass, odd ones to fail. */
  readonly outputs: readonly string[];
}

function buildCases(): BenchCase[] {
  const random = rng(20240601);
  const mix = (make: (pass: boolean, i: number) => string): string[] =>
    Array.from({ length: OUTPUTS_PER_CASE }, (_, i) => make(i % 2 === 0, i));

  const exactText = prose(random, KIB);
  const caseText = `Straße ${prose(random, KIB - 10)}`;
  /** A fresh flat copy, so a passing comparison cannot short-cut on string identity. */
  const copy = (t: string): string => Array.from(t).join('');
  const json = jsonObject(random, KIB);
  const expectedJson = JSON.stringify(json);

  return [
    {
      title: 'exact',
      spec: { type: 'exact' },
      expected: exactText,
      outputs: mix((pass) => (pass ? copy(exactText) : `${exactText.slice(0, KIB - 1)}!`)),
    },
    {
      title: 'exact (trim, ignore_case)',
      spec: { type: 'exact', trim: true, ignore_case: true },
      expected: caseText,
      outputs: mix((pass) => (pass ? ` ${caseText.toUpperCase()}\n` : `${caseText.replace('ß', 's')}   `)),
    },
    {
      title: 'contains',
      spec: { type: 'contains', value: ['refund issued', 'order #'] },
      outputs: mix((pass) => {
        const body = prose(random, KIB - 30);
        return pass ? `${body}refund issued, order #12345` : `${body}refund denied, order 12345.`;
      }),
    },
    {
      title: 'contains (ignore_case)',
      spec: { type: 'contains', value: ['REFUND ISSUED', 'Order #'], ignore_case: true },
      outputs: mix((pass) => {
        const body = prose(random, KIB - 30);
        return pass ? `${body}Refund Issued, ORDER #12345` : `${body}refund denied, order 12345.`;
      }),
    },
    {
      title: 'not_contains',
      spec: { type: 'not_contains', value: ['password', 'api_key', 'BEGIN PRIVATE KEY'] },
      outputs: mix((pass) => {
        const body = prose(random, KIB - 20);
        return pass ? `${body}all clear, thanks..` : `${body}the password is x.`;
      }),
    },
    {
      title: 'regex',
      spec: { type: 'regex', pattern: '\\border\\s+#\\d{5}\\b' },
      outputs: mix((pass) => {
        const body = prose(random, KIB - 20);
        return pass ? `${body} order #12345 done` : `${body} order 12345 done!`;
      }),
    },
    {
      title: 'regex (flags ims)',
      spec: { type: 'regex', pattern: '^status:\\s*(resolved|closed)$', flags: 'ims' },
      outputs: mix((pass) => {
        const body = prose(random, KIB - 30);
        return pass ? `${body}\nSTATUS: Resolved\nbye` : `${body}\nstatus: pending...\nbye`;
      }),
    },
    {
      title: 'json_valid',
      spec: { type: 'json_valid', require: 'object' },
      outputs: mix((pass) => (pass ? expectedJson : expectedJson.slice(0, -1))),
    },
    {
      title: 'json_equal',
      spec: { type: 'json_equal' },
      expected: json,
      outputs: mix((pass, i) => {
        const obj = shuffledKeys(json, random);
        if (!pass) obj[`field_${i % 5}`] = 'changed';
        return JSON.stringify(obj);
      }),
    },
    {
      title: 'numeric_range (whole)',
      spec: { type: 'numeric_range', min: 0, max: 10 },
      outputs: mix((pass, i) => `${' '.repeat(KIB - 8)}${pass ? (i % 10) + 0.5 : 10 + i}\n`),
    },
    {
      title: 'numeric_range (first)',
      spec: { type: 'numeric_range', min: 0, max: 10, extract: 'first' },
      outputs: mix((pass, i) => {
        const body = prose(random, KIB - 20).replace(/[0-9]/g, '');
        return `${body}score: ${pass ? 7.5 : 42 + i} / 10`;
      }),
    },
  ];
}

/** Runs `fn` over the outputs round-robin for at least `ms` milliseconds; returns cases per second. */
function measure(outputs: readonly string[], fn: (output: string) => boolean, ms: number): { rate: number; sink: number } {
  let sink = 0;
  let cases = 0;
  const start = process.hrtime.bigint();
  const budget = BigInt(ms) * 1_000_000n;
  let elapsed = 0n;
  do {
    for (let i = 0; i < outputs.length; i++) if (fn(outputs[i] as string)) sink++;
    cases += outputs.length;
    elapsed = process.hrtime.bigint() - start;
  } while (elapsed < budget);
  return { rate: cases / (Number(elapsed) / 1e9), sink };
}

function main(): void {
  const rows: [string, number, number, number, string][] = [];
  let sink = 0;
  for (const c of buildCases()) {
    const result = validateScorerSpec(c.spec, c.expected === undefined ? {} : { expected: c.expected });
    if (!result.ok || result.scorer.kind !== 'deterministic') {
      throw new Error(`bench spec refused: ${c.title} ${JSON.stringify(result.ok ? result.scorer.kind : result.issues)}`);
    }
    const scorer: CompiledDeterministicScorer = result.scorer;
    const passed = c.outputs.filter((o) => scorer.score(o).passed).length;
    // A realistic absent needle: its first letter is frequent in the prose, so includes() really scans.
    const needle = 'order #99999';
    const scoreFn = (o: string): boolean => scorer.score(o).passed;
    const baselineFn = (o: string): boolean => o.includes(needle);

    measure(c.outputs, scoreFn, WARMUP_MS);
    measure(c.outputs, baselineFn, WARMUP_MS);
    const scored = measure(c.outputs, scoreFn, MEASURE_MS);
    const baseline = measure(c.outputs, baselineFn, MEASURE_MS);
    sink += scored.sink + baseline.sink;
    rows.push([c.title, scored.rate, baseline.rate, scored.rate / baseline.rate, `${passed}/${c.outputs.length}`]);
  }

  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  const header = ['scorer', 'cases/s', 'includes() cases/s', 'ratio', 'passing'];
  const table = rows.map(([t, r, b, ratio, p]) => [t, fmt(r), fmt(b), ratio.toFixed(3), p]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] as string).length)));
  const line = (cells: string[]): string => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
  console.log(`scorers on ${KIB}-character outputs (${OUTPUTS_PER_CASE} per scorer, half passing); node ${process.version}`);
  console.log(`ratio = scorer cases/s / cases/s of a plain output.includes('order #99999') loop on the same outputs\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table) console.log(line(row));
  if (sink < 0) console.log(sink); // keeps the measured work observable
}

main();
