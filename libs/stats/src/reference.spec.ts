/**
 * Every published value in test/fixtures/reference/stats-reference.json, checked within its own tolerance
 * (R2, G1, J4, GT6). The numbers are read from the file, never copied here; an entry whose `statistic`
 * or inputs this dispatcher does not know fails, so a new reference value is never skipped silently.
 */
import * as fs from 'node:fs';
import { referencePath } from '../../../test/support/reference';
import { cohenKappa, kappaFromLabels, newcombeDiff, pearson, pointBiserial, sensitivity, specificity, wilson } from './index';

interface ReferenceEntry {
  readonly statistic: string;
  readonly inputs: Record<string, unknown>;
  readonly expected: number | [number, number] | null;
  readonly tolerance: number;
  readonly source: string;
  readonly note?: string;
}


/** What a statistic computed for one entry: a point value or an interval, null meaning undefined. */
type Computed = { kind: 'value'; value: number | null; reason?: string } | { kind: 'interval'; lower: number; upper: number };

const num = (inputs: Record<string, unknown>, key: string): number => {
  const v = inputs[key];
  if (typeof v !== 'number') throw new Error(`input ${key} must be a number, got ${JSON.stringify(v)}`);
  return v;
};

const numbers = (inputs: Record<string, unknown>, key: string): number[] => {
  const v = inputs[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new Error(`input ${key} must be a number array`);
  return v as number[];
};

function assertKnownInputs(entry: ReferenceEntry, known: readonly string[]): void {
  const unknown = Object.keys(entry.inputs).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw new Error(`${entry.statistic}: unknown input(s) ${unknown.join(', ')}`);
}

/**
 * Parses the python-like label notation of the reference file: `y1=[0]*40+[1]*60; y2=[1,1,0]`.
 * Terms are list literals of numbers, quoted strings or True/False, optionally repeated with `*k` (either
 * side), joined with `+`. Anything else throws, so a new notation cannot be misread.
 */
function parseLabelAssignments(text: string): Map<string, (number | string | boolean)[]> {
  const out = new Map<string, (number | string | boolean)[]>();
  for (const part of text.split(';').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`cannot parse labels assignment: ${part}`);
    const name = part.slice(0, eq).trim();
    if (!/^[A-Za-z_]\w*$/.test(name)) throw new Error(`bad label variable name: ${name}`);
    out.set(name, parseListExpression(part.slice(eq + 1)));
  }
  return out;
}

function parseListExpression(src: string): (number | string | boolean)[] {
  const tokens = src.match(/\s*(\[|\]|,|\*|\+|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|'[^']*'|"[^"]*"|True|False|\S)/g) ?? [];
  const toks = tokens.map((t) => t.trim());
  let pos = 0;
  const peek = () => toks[pos];
  const take = (expected?: string) => {
    const t = toks[pos++];
    if (t === undefined || (expected !== undefined && t !== expected)) {
      throw new Error(`labels: expected ${expected ?? 'a token'} at token ${pos} of "${src}", got ${t}`);
    }
    return t;
  };
  const integer = () => {
    const t = take();
    if (!/^\d+$/.test(t)) throw new Error(`labels: repeat count must be a non-negative integer, got ${t}`);
    return Number(t);
  };
  const scalar = (): number | string | boolean => {
    const t = take();
    if (t === 'True') return true;
    if (t === 'False') return false;
    if (/^['"]/.test(t)) return t.slice(1, -1);
    if (/^-?\d/.test(t)) return Number(t);
    throw new Error(`labels: unexpected token ${t}`);
  };
  const list = () => {
    take('[');
    const items: (number | string | boolean)[] = [];
    while (peek() !== ']') {
      items.push(scalar());
      if (peek() === ',') take(',');
      else if (peek() !== ']') throw new Error(`labels: expected , or ] in "${src}"`);
    }
    take(']');
    return items;
  };
  const term = () => {
    let times = 1;
    if (peek() !== '[') {
      times = integer();
      take('*');
    }
    const items = list();
    if (peek() === '*') {
      take('*');
      times *= integer();
    }
    return Array.from({ length: times }, () => items).flat();
  };
  const result = term();
  while (peek() === '+') {
    take('+');
    result.push(...term());
  }
  if (pos !== toks.length) throw new Error(`labels: trailing input in "${src}"`);
  return result;
}

function labelsPair(entry: ReferenceEntry): [unknown[], unknown[]] {
  const text = entry.inputs['labels'];
  if (typeof text !== 'string') throw new Error('labels must be a string');
  const vars = [...parseLabelAssignments(text).values()];
  if (vars.length !== 2) throw new Error(`labels must assign exactly two raters, got ${vars.length}`);
  return vars as [unknown[], unknown[]];
}

const value = (v: number | null, reason?: string): Computed => (reason === undefined ? { kind: 'value', value: v } : { kind: 'value', value: v, reason });

/** Computes the entry; returns every way the file lets us compute it (e.g. from a table and from labels). */
function compute(entry: ReferenceEntry): Computed[] {
  const i = entry.inputs;
  switch (entry.statistic) {
    case 'wilson_95': {
      assertKnownInputs(entry, ['x', 'n']);
      const w = wilson(num(i, 'x'), num(i, 'n'));
      return [{ kind: 'interval', lower: w.lower, upper: w.upper }];
    }
    case 'newcombe10_diff_95': {
      assertKnownInputs(entry, ['x1', 'n1', 'x2', 'n2', 'diff']);
      const args = [num(i, 'x1'), num(i, 'n1'), num(i, 'x2'), num(i, 'n2')] as const;
      const direction = i['diff'] ?? 'p1-p2';
      if (direction === 'p1-p2') {
        const d = newcombeDiff(...args);
        return [{ kind: 'interval', lower: d.lower, upper: d.upper }];
      }
      if (direction === 'p2-p1') {
        const d = newcombeDiff(args[2], args[3], args[0], args[1]);
        return [{ kind: 'interval', lower: d.lower, upper: d.upper }];
      }
      throw new Error(`newcombe: unknown diff direction ${JSON.stringify(direction)}`);
    }
    case 'cohen_kappa': {
      assertKnownInputs(entry, ['table_rows_rater1_cols_rater2', 'table_rowsA_colsB_yes_no', 'labels']);
      const results: Computed[] = [];
      for (const key of ['table_rows_rater1_cols_rater2', 'table_rowsA_colsB_yes_no']) {
        if (i[key] === undefined) continue;
        const k = cohenKappa(i[key] as number[][]);
        results.push(value(k.kappa, k.reason));
      }
      if (i['labels'] !== undefined) {
        const [a, b] = labelsPair(entry);
        const k = kappaFromLabels(a, b);
        // sklearn's test also asserts kappa(y1, y2) == kappa(y2, y1).
        expect(kappaFromLabels(b, a).kappa).toBe(k.kappa);
        results.push(value(k.kappa, k.reason));
      }
      if (results.length === 0) throw new Error('cohen_kappa entry has neither a table nor labels');
      return results;
    }
    case 'sensitivity': {
      assertKnownInputs(entry, ['TP', 'FN', 'reference', 'test', 'positive']);
      const s = sensitivity(num(i, 'TP'), num(i, 'FN'));
      return [value(s.value, s.reason)];
    }
    case 'specificity': {
      assertKnownInputs(entry, ['TN', 'FP', 'reference', 'test', 'positive']);
      const s = specificity(num(i, 'TN'), num(i, 'FP'));
      return [value(s.value, s.reason)];
    }
    case 'pearson_r': {
      assertKnownInputs(entry, ['x', 'y', 'dataset']);
      const r = pearson(numbers(i, 'x'), numbers(i, 'y'));
      return [value(r.r, r.reason)];
    }
    case 'point_biserial_r': {
      assertKnownInputs(entry, ['binary', 'continuous']);
      const r = pointBiserial(numbers(i, 'binary') as (0 | 1)[], numbers(i, 'continuous'));
      return [value(r.r, r.reason)];
    }
    default:
      throw new Error(`unknown reference statistic ${JSON.stringify(entry.statistic)}: teach reference.spec.ts to check it`);
  }
}

function check(entry: ReferenceEntry, computed: Computed): void {
  const tol = entry.tolerance + 1e-15;
  if (computed.kind === 'interval') {
    if (!Array.isArray(entry.expected) || entry.expected.length !== 2) throw new Error('expected an interval [lower, upper]');
    const [lo, hi] = entry.expected;
    expect(Math.abs(computed.lower - lo)).toBeLessThanOrEqual(tol);
    expect(Math.abs(computed.upper - hi)).toBeLessThanOrEqual(tol);
    return;
  }
  if (entry.expected === null) {
    expect(computed.value).toBeNull();
    expect(computed.reason).toEqual(expect.stringMatching(/^[a-z_]+$/));
    return;
  }
  if (typeof entry.expected !== 'number') throw new Error('expected a number or null');
  expect(computed.value).not.toBeNull();
  expect(Math.abs((computed.value as number) - entry.expected)).toBeLessThanOrEqual(tol);
}

const entries = JSON.parse(fs.readFileSync(referencePath('stats-reference.json'), 'utf8')) as ReferenceEntry[];
let checked = 0;

describe(`published reference values (${referencePath('stats-reference.json')})`, () => {
  it('the file is a non-empty list, each entry with a source and a non-negative tolerance', () => {
    expect(Array.isArray(entries)).toBe(true);
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) {
      expect(e.source).toEqual(expect.any(String));
      expect(e.tolerance).toBeGreaterThanOrEqual(0);
    }
  });

  it.each(entries.map((e, idx) => [idx, e.statistic, e] as const))('entry %i: %s', (_idx, _statistic, entry) => {
    const results = compute(entry);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) check(entry, r);
    checked += 1;
  });

  it('every entry was checked', () => {
    expect(checked).toBe(entries.length);
  });
});

describe('python-like label parser used by the reference test', () => {
  it('expands repetitions and concatenations', () => {
    const vars = parseLabelAssignments("y1=[0]*2+[1]*3; y2=[1,0]+2*['a']+[True]");
    expect(vars.get('y1')).toEqual([0, 0, 1, 1, 1]);
    expect(vars.get('y2')).toEqual([1, 0, 'a', 'a', true]);
  });

  it('rejects notation it does not understand', () => {
    expect(() => parseLabelAssignments('y1=[0]*x')).toThrow();
    expect(() => parseLabelAssignments('y1=list(range(3))')).toThrow();
    expect(() => parseLabelAssignments('y1=[0,1')).toThrow();
  });
});
