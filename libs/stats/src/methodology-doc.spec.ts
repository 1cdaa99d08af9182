/**
 * docs/EVAL-METHODOLOGY.md (DOC1) cannot drift from the code: every number in its `<!-- check:NAME -->`
 * tables is recomputed here with libs/stats (and, for verdicts and certification, the pure rules of
 * libs/domain) and must match to the digits written; the published values it quotes must be those of
 * test/fixtures/reference/stats-reference.json (read from the file, never copied here); and the page must name
 * every implemented requirement id of the scorer, run, regression, judge and gate families (S, R, G, J, GT)
 * listed in docs/requirements.md.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readReference } from '../../../test/support/reference';
import { calibrate, type CalibrationItem } from '../../domain/src/judge/calibration';
import { compareRuns } from '../../domain/src/regression/compare';
import {
  Z_95,
  cohenKappa,
  kappaFromLabels,
  newcombeDiff,
  pearson,
  pointBiserial,
  sensitivity,
  specificity,
  wilson,
  zForConfidence,
} from './index';

const repoRoot = path.resolve(__dirname, '../../..');
const docPath = path.join(repoRoot, 'docs', 'EVAL-METHODOLOGY.md');
const requirementsPath = path.join(repoRoot, 'docs', 'requirements.md');

const doc = fs.readFileSync(docPath, 'utf8');

interface ReferenceEntry {
  readonly statistic: string;
  readonly inputs: Record<string, unknown>;
  readonly expected: number | [number, number] | null;
  readonly tolerance: number;
  readonly source: string;
}
const reference = readReference<ReferenceEntry[]>('stats-reference.json');

// ---------------------------------------------------------------------------------------------------------
// Reading the document

type Row = Record<string, string>;

/** Strips one code span around a whole cell: `x` -> x. */
function unquote(cell: string): string {
  const t = cell.trim();
  return /^`[^`]*`$/.test(t) ? t.slice(1, -1) : t;
}

function splitRow(line: string): string[] {
  const t = line.trim();
  if (!t.startsWith('|') || !t.endsWith('|')) throw new Error(`not a table row: ${line}`);
  return t.slice(1, -1).split('|').map(unquote);
}

/** The markdown table right after `<!-- check:NAME -->` (blank lines allowed in between), as header-keyed rows. */
function checkedTable(name: string): Row[] {
  const marker = `<!-- check:${name} -->`;
  const at = doc.indexOf(marker);
  if (at < 0) throw new Error(`docs/EVAL-METHODOLOGY.md has no ${marker}`);
  if (doc.indexOf(marker, at + marker.length) >= 0) throw new Error(`${marker} appears twice`);
  const lines = doc.slice(at + marker.length).split('\n');
  let i = 0;
  while (i < lines.length && lines[i].trim() === '') i++;
  const table: string[] = [];
  while (i < lines.length && lines[i].trim().startsWith('|')) table.push(lines[i++]);
  if (table.length < 3) throw new Error(`${marker} is not followed by a table with a header, a separator and rows`);
  const header = splitRow(table[0]);
  if (!splitRow(table[1]).every((c) => /^:?-{3,}:?$/.test(c))) throw new Error(`${marker}: second line is not a separator`);
  return table.slice(2).map((line, r) => {
    const cells = splitRow(line);
    if (cells.length !== header.length) throw new Error(`${marker} row ${r + 1}: ${cells.length} cells, header has ${header.length}`);
    return Object.fromEntries(header.map((h, c) => [h, cells[c]]));
  });
}

function cell(row: Row, column: string): string {
  const v = row[column];
  if (v === undefined) throw new Error(`column "${column}" missing; columns: ${Object.keys(row).join(', ')}`);
  return v;
}

/** A number as written, with the precision it claims (digits after the point). */
function written(text: string): { value: number; decimals: number } {
  const t = text.trim();
  const m = /^-?\d+(?:\.(\d+))?$/.exec(t);
  if (!m) throw new Error(`not a plain decimal number: "${text}"`);
  return { value: Number(t), decimals: m[1]?.length ?? 0 };
}

/** Exact integer input (a count). */
function count(text: string): number {
  const { value, decimals } = written(text);
  if (decimals !== 0 || !Number.isSafeInteger(value)) throw new Error(`not an integer count: "${text}"`);
  return value;
}

/** The written number must be the computed one rounded to the digits shown (half a unit of the last digit). */
function expectWritten(text: string, computed: number | null, what: string): void {
  const { value, decimals } = written(text);
  if (computed === null) throw new Error(`${what}: the code computes null, the document writes ${text}`);
  const tolerance = 0.5 * 10 ** -decimals + 1e-12;
  const delta = Math.abs(computed - value);
  if (!(delta <= tolerance)) {
    throw new Error(`${what}: the document writes ${text}, the code computes ${computed} (off by ${delta}, allowed ${tolerance})`);
  }
}

const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

// ---------------------------------------------------------------------------------------------------------

describe('docs/EVAL-METHODOLOGY.md matches the code (DOC1)', () => {
  describe('requirement ids', () => {
    // The ids of these families as of this writing; docs/requirements.md is read too, so an id that is
    // implemented there later is required here without editing this list.
    const known = [
      ...['S1', 'S2', 'S3', 'S4', 'S5'],
      ...['R1', 'R2', 'R3', 'R4', 'R5', 'R6'],
      ...['G1', 'G2', 'G3', 'G4', 'G5', 'G6'],
      ...['J1', 'J2', 'J3', 'J4', 'J5', 'J6'],
      ...['GT1', 'GT2', 'GT3', 'GT4', 'GT5', 'GT6'],
    ];

    /** Rows of docs/requirements.md in the S, R, G, J and GT families that are implemented (done or partial). */
    function specIds(): string[] {
      const ids: string[] = [];
      for (const line of fs.readFileSync(requirementsPath, 'utf8').split('\n')) {
        const cells = line.split('|').map((c) => c.replace(/[`*]/g, '').trim());
        const id = /^(S|R|G|J|GT)\d+$/.exec(cells[1] ?? '')?.[0];
        if (id && !/^open\b/.test(cells[cells.length - 2] ?? '')) ids.push(id);
      }
      return ids;
    }

    it('docs/requirements.md still lists (at least) the known ids as implemented', () => {
      const ids = specIds();
      expect(ids).toEqual(expect.arrayContaining(known));
    });

    it.each([...new Set([...known, ...specIds()])])('names %s', (id) => {
      expect(doc).toMatch(new RegExp(`(?<![A-Za-z0-9])${id}(?![0-9])`));
    });
  });

  it('quotes the exact 95% normal quantile the library uses', () => {
    expect(String(Z_95)).toBe('1.959963984540054');
    expect(doc).toContain('1.959963984540054');
  });

  describe('worked example (Newcombe 1998 Table II (a) as a regression)', () => {
    const rows = checkedTable('worked-example');
    const byQuantity = new Map(rows.map((r) => [cell(r, 'quantity'), cell(r, 'value')]));
    const input = (q: string) => {
      const v = byQuantity.get(q);
      if (v === undefined) throw new Error(`worked example has no input ${q}`);
      return v;
    };
    const x1 = count(input('x1'));
    const n1 = count(input('n1'));
    const x2 = count(input('x2'));
    const n2 = count(input('n2'));
    const threshold = written(input('regression_threshold')).value;

    // Everything below comes from libs/stats (and compareRuns for the G2 verdict).
    const w1 = wilson(x1, n1);
    const w2 = wilson(x2, n2);
    const d = newcombeDiff(x1, n1, x2, n2);
    const cmp = compareRuns(
      { run_id: 'run', n: n1, passed: x1, score: x1 / n1 },
      { run_id: 'baseline', n: n2, passed: x2, score: x2 / n2 },
      threshold,
    );
    const p1 = w1.estimate as number;
    const p2 = w2.estimate as number;
    const z2 = Z_95 * Z_95;
    const computed: Record<string, number | string> = {
      x1,
      n1,
      x2,
      n2,
      regression_threshold: threshold,
      z: Z_95,
      'z^2': z2,
      p1,
      denom1: 1 + z2 / n1,
      centre1: (w1.lower + w1.upper) / 2,
      half1: (w1.upper - w1.lower) / 2,
      l1: w1.lower,
      u1: w1.upper,
      p2,
      denom2: 1 + z2 / n2,
      centre2: (w2.lower + w2.upper) / 2,
      half2: (w2.upper - w2.lower) / 2,
      l2: w2.lower,
      u2: w2.upper,
      diff: d.diff as number,
      'p1 - l1': p1 - w1.lower,
      'u2 - p2': w2.upper - p2,
      'u1 - p1': w1.upper - p1,
      'p2 - l2': p2 - w2.lower,
      dL: (d.diff as number) - d.lower,
      dU: d.upper - (d.diff as number),
      L: d.lower,
      U: d.upper,
      excludes_zero: d.excludesZero ? 'yes' : 'no',
      score_drop: cmp.score_drop,
      verdict: cmp.verdict,
    };

    it('shows every step, and only steps the test knows', () => {
      expect([...byQuantity.keys()].sort()).toEqual(Object.keys(computed).sort());
      expect(rows.length).toBe(byQuantity.size);
    });

    it.each(rows.map((r) => [cell(r, 'quantity'), cell(r, 'value')] as const))('%s = %s', (quantity, value) => {
      const c = computed[quantity];
      if (typeof c === 'string') expect(value).toBe(c);
      else expectWritten(value, c, `worked example ${quantity}`);
    });

    it('the formulas written in the document are the ones the code evaluates', () => {
      for (const [x, n, w, p] of [
        [x1, n1, w1, p1],
        [x2, n2, w2, p2],
      ] as const) {
        const denom = 1 + z2 / n;
        const centre = (p + z2 / (2 * n)) / denom;
        const half = (Z_95 / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
        expect(x).toBeGreaterThan(0);
        expect(x).toBeLessThan(n); // interior: no clamping, so centre -/+ half are the bounds
        expect(Math.abs(centre - half - w.lower)).toBeLessThan(1e-12);
        expect(Math.abs(centre + half - w.upper)).toBeLessThan(1e-12);
      }
      expect(Math.abs(Math.sqrt((p1 - w1.lower) ** 2 + (w2.upper - p2) ** 2) - (computed.dL as number))).toBeLessThan(1e-12);
      expect(Math.abs(Math.sqrt((w1.upper - p1) ** 2 + (p2 - w2.lower) ** 2) - (computed.dU as number))).toBeLessThan(1e-12);
      // compareRuns reports the same interval as newcombeDiff(run, baseline): run - baseline (G1).
      expect(cmp.pass_rate_diff.lower).toBe(d.lower);
      expect(cmp.pass_rate_diff.upper).toBe(d.upper);
    });

    it('is Table II example (a) of the reference file, mirrored (run - baseline)', () => {
      const a = reference.find(
        (e) => e.statistic === 'newcombe10_diff_95' && e.inputs['x1'] === x2 && e.inputs['n1'] === n2 && e.inputs['x2'] === x1 && e.inputs['n2'] === n1,
      );
      expect(a).toBeDefined();
      expect(a?.inputs['diff'] ?? 'p1-p2').toBe('p1-p2');
      expect(a?.source).toContain('example (a)');
      const [lo, hi] = a?.expected as [number, number];
      expect(round4(d.lower)).toBe(-hi);
      expect(round4(d.upper)).toBe(-lo);
    });
  });

  describe('reference intervals table', () => {
    const rows = checkedTable('reference-intervals');
    const statistics = ['wilson_95', 'newcombe10_diff_95'];

    function entryFor(row: Row): ReferenceEntry | undefined {
      const statistic = cell(row, 'statistic');
      return reference.find((e) => {
        if (e.statistic !== statistic) return false;
        const i = e.inputs;
        if (statistic === 'wilson_95') return i['x'] === count(cell(row, 'x1')) && i['n'] === count(cell(row, 'n1'));
        const same = [i['x1'], i['n1'], i['x2'], i['n2']];
        const row4 = ['x1', 'n1', 'x2', 'n2'].map((k) => count(cell(row, k)));
        const direction = i['diff'] ?? 'p1-p2';
        if (direction === 'p1-p2') return same.every((v, k) => v === row4[k]);
        if (direction === 'p2-p1') return [same[2], same[3], same[0], same[1]].every((v, k) => v === row4[k]);
        return false;
      });
    }

    it.each(rows.map((r) => [cell(r, 'entry'), r] as const))('%s: computed bounds match libs/stats', (_entry, row) => {
      const statistic = cell(row, 'statistic');
      let lower: number;
      let upper: number;
      if (statistic === 'wilson_95') {
        expect(cell(row, 'x2')).toBe('-');
        expect(cell(row, 'n2')).toBe('-');
        ({ lower, upper } = wilson(count(cell(row, 'x1')), count(cell(row, 'n1'))));
      } else if (statistic === 'newcombe10_diff_95') {
        ({ lower, upper } = newcombeDiff(count(cell(row, 'x1')), count(cell(row, 'n1')), count(cell(row, 'x2')), count(cell(row, 'n2'))));
      } else {
        throw new Error(`unknown statistic ${statistic}`);
      }
      expectWritten(cell(row, 'libs/stats lower'), lower, `${cell(row, 'entry')} lower`);
      expectWritten(cell(row, 'libs/stats upper'), upper, `${cell(row, 'entry')} upper`);
    });

    it.each(rows.map((r) => [cell(r, 'entry'), r] as const))('%s: published bounds are those of stats-reference.json', (_entry, row) => {
      const e = entryFor(row);
      expect(e).toBeDefined();
      const [lo, hi] = e?.expected as [number, number];
      expect(written(cell(row, 'published lower')).value).toBe(lo);
      expect(written(cell(row, 'published upper')).value).toBe(hi);
    });

    it('lists every interval entry of the reference file', () => {
      const listed = new Set(rows.map(entryFor));
      const missing = reference.filter((e) => statistics.includes(e.statistic) && !listed.has(e));
      expect(missing.map((e) => `${e.statistic} ${JSON.stringify(e.inputs)}`)).toEqual([]);
    });
  });

  describe('reference agreement table (J4 statistics)', () => {
    const rows = checkedTable('reference-agreement');
    type Computed = { value: number | null; reason?: string };

    function compute(statistic: string, inputs: Record<string, unknown>): Computed {
      const nums = (k: string) => inputs[k] as number[];
      switch (statistic) {
        case 'cohen_kappa': {
          const k = inputs['table'] !== undefined ? cohenKappa(inputs['table'] as number[][]) : kappaFromLabels(inputs['a'] as unknown[], inputs['b'] as unknown[]);
          return { value: k.kappa, reason: k.reason };
        }
        case 'sensitivity': {
          const s = sensitivity(inputs['tp'] as number, inputs['fn'] as number);
          return { value: s.value, reason: s.reason };
        }
        case 'specificity': {
          const s = specificity(inputs['tn'] as number, inputs['fp'] as number);
          return { value: s.value, reason: s.reason };
        }
        case 'pearson_r': {
          const r = pearson(nums('x'), nums('y'));
          return { value: r.r, reason: r.reason };
        }
        case 'point_biserial_r': {
          const r = pointBiserial(nums('binary') as (0 | 1)[], nums('continuous'));
          return { value: r.r, reason: r.reason };
        }
        default:
          throw new Error(`unknown statistic ${statistic}`);
      }
    }

    /** Do the document's inputs describe this reference entry? */
    function sameInputs(statistic: string, doc: Record<string, unknown>, e: ReferenceEntry): boolean {
      const i = e.inputs;
      const eq = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
      switch (statistic) {
        case 'cohen_kappa':
          if (doc['table'] !== undefined) return eq(doc['table'], i['table_rows_rater1_cols_rater2']) || eq(doc['table'], i['table_rowsA_colsB_yes_no']);
          return typeof i['labels'] === 'string' && i['labels'].replace(/\s/g, '') === `y1=${JSON.stringify(doc['a'])};y2=${JSON.stringify(doc['b'])}`;
        case 'sensitivity':
          return i['TP'] === doc['tp'] && i['FN'] === doc['fn'];
        case 'specificity':
          return i['TN'] === doc['tn'] && i['FP'] === doc['fp'];
        case 'pearson_r':
          return eq(doc['x'], i['x']) && eq(doc['y'], i['y']);
        case 'point_biserial_r':
          return eq(doc['binary'], i['binary']) && eq(doc['continuous'], i['continuous']);
        default:
          return false;
      }
    }

    const parsed = rows.map((row) => ({
      entry: cell(row, 'entry'),
      statistic: cell(row, 'statistic'),
      inputs: JSON.parse(cell(row, 'inputs')) as Record<string, unknown>,
      published: cell(row, 'published'),
      computed: cell(row, 'libs/stats'),
    }));

    function entryFor(p: (typeof parsed)[number]): ReferenceEntry | undefined {
      return reference.find((e) => e.statistic === p.statistic && sameInputs(p.statistic, p.inputs, e));
    }

    it.each(parsed.map((p) => [p.entry, p] as const))('%s: libs/stats column matches the code', (_entry, p) => {
      const c = compute(p.statistic, p.inputs);
      const nullMatch = /^null \(([a-z_]+)\)$/.exec(p.computed);
      if (nullMatch) {
        expect(c.value).toBeNull();
        expect(c.reason).toBe(nullMatch[1]);
      } else {
        expectWritten(p.computed, c.value, `${p.entry} computed`);
      }
    });

    it.each(parsed.map((p) => [p.entry, p] as const))('%s: published value is that of stats-reference.json, within its tolerance of the code', (_entry, p) => {
      const e = entryFor(p);
      expect(e).toBeDefined();
      const entry = e as ReferenceEntry;
      const c = compute(p.statistic, p.inputs);
      if (p.published === 'null') {
        expect(entry.expected).toBeNull();
        expect(c.value).toBeNull();
      } else {
        expect(written(p.published).value).toBe(entry.expected);
        expect(Math.abs((c.value as number) - (entry.expected as number))).toBeLessThanOrEqual(entry.tolerance + 1e-15);
      }
    });

    it('together with the interval table, covers every entry of the reference file', () => {
      const intervalRows = checkedTable('reference-intervals');
      const covered = (e: ReferenceEntry) => {
        if (e.statistic === 'wilson_95' || e.statistic === 'newcombe10_diff_95') {
          return intervalRows.some((r) => cell(r, 'statistic') === e.statistic);
        }
        return parsed.some((p) => p.statistic === e.statistic && sameInputs(p.statistic, p.inputs, e));
      };
      expect(reference.filter((e) => !covered(e)).map((e) => `${e.statistic} ${JSON.stringify(e.inputs)}`)).toEqual([]);
    });
  });

  describe('z = 1.959963984540054 against z = 1.96 (Newcombe (c))', () => {
    const rows = checkedTable('z-choice');

    it.each(rows.map((r) => [cell(r, 'critical value z'), r] as const))('z = %s', (z, row) => {
      const confidence = written(cell(row, 'confidence level')).value;
      expect(Math.abs(zForConfidence(confidence) - Number(z))).toBeLessThan(1e-12);
      const upper = newcombeDiff(6, 7, 2, 7, { confidence }).upper;
      expectWritten(cell(row, 'upper bound, Newcombe (c) 6/7 - 2/7'), upper, `upper at z = ${z}`);
      expect(written(cell(row, 'to 4 decimals')).value).toBe(round4(upper));
    });

    it('only the exact quantile reproduces the published 4-decimal bound', () => {
      const c = reference.find((e) => e.statistic === 'newcombe10_diff_95' && e.source.includes('example (c)'));
      const published = (c?.expected as [number, number])[1];
      const byZ = new Map(rows.map((r) => [cell(r, 'critical value z'), written(cell(r, 'to 4 decimals')).value]));
      expect(byZ.get(String(Z_95))).toBe(published);
      expect(byZ.get('1.96')).not.toBe(published);
    });
  });

  describe('small-n table (G3)', () => {
    const rows = checkedTable('small-n');
    const threshold = 0.1;

    it('states the threshold it uses', () => {
      const at = doc.indexOf('<!-- check:small-n -->');
      expect(doc.slice(Math.max(0, at - 300), at)).toContain(`threshold ${threshold}`);
    });

    it.each(rows.map((r) => [cell(r, 'cases n'), r] as const))('n = %s', (_n, row) => {
      const n = count(cell(row, 'cases n'));
      const base = count(cell(row, 'baseline passed'));
      const run = count(cell(row, 'run passed'));
      const c = compareRuns({ run_id: 'run', n, passed: run, score: run / n }, { run_id: 'baseline', n, passed: base, score: base / n }, threshold);
      expectWritten(cell(row, 'score_drop'), c.score_drop, 'score_drop');
      expectWritten(cell(row, 'diff lower'), c.pass_rate_diff.lower, 'diff lower');
      expectWritten(cell(row, 'diff upper'), c.pass_rate_diff.upper, 'diff upper');
      expect(cell(row, 'verdict')).toBe(c.verdict);
    });
  });

  describe('class-imbalance example (J4)', () => {
    const rows = checkedTable('imbalance');
    const values = new Map(rows.map((r) => [cell(r, 'quantity'), cell(r, 'value')]));
    const get = (q: string) => {
      const v = values.get(q);
      if (v === undefined) throw new Error(`imbalance table has no ${q}`);
      return v;
    };
    const tp = count(get('tp'));
    const fn = count(get('fn'));
    const fp = count(get('fp'));
    const tn = count(get('tn'));
    const item = (human_pass: boolean, judge_pass: boolean): CalibrationItem => ({ human_pass, judge_pass, output_chars: 100 });
    const items = [
      ...Array.from({ length: tp }, () => item(true, true)),
      ...Array.from({ length: fn }, () => item(true, false)),
      ...Array.from({ length: fp }, () => item(false, true)),
      ...Array.from({ length: tn }, () => item(false, false)),
    ];
    const report = calibrate(items);
    const computed: Record<string, number | string | null> = {
      tp,
      fn,
      fp,
      tn,
      agreement: report.agreement.value,
      'agreement.lower': report.agreement.lower,
      'agreement.upper': report.agreement.upper,
      'kappa.observed': report.kappa.observed,
      'kappa.expected': report.kappa.expected,
      kappa: report.kappa.value,
      sensitivity: report.sensitivity.value,
      specificity: report.specificity.value,
      'specificity.upper': report.specificity.upper,
      status: report.status,
      reasons: report.reasons.join(', '),
    };

    it('shows only quantities the test knows', () => {
      expect([...values.keys()].filter((k) => !(k in computed))).toEqual([]);
    });

    it.each(rows.map((r) => [cell(r, 'quantity'), cell(r, 'value')] as const))('%s = %s', (quantity, value) => {
      const c = computed[quantity];
      if (typeof c === 'string') expect(value).toBe(c);
      else expectWritten(value, c, `imbalance ${quantity}`);
    });
  });

  describe('links', () => {
    const headings = doc
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) =>
        l
          .replace(/^#+ /, '')
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 _-]/g, '')
          .replace(/ /g, '-'),
      );
    const links = [...new Set([...doc.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]))];

    it('has links to check', () => {
      expect(links.length).toBeGreaterThan(0);
    });

    it.each(links.filter((l) => !/^[a-z]+:/.test(l)).map((l) => [l]))('%s resolves', (link) => {
      const [file, anchor] = link.split('#');
      if (file === '') {
        expect(headings).toContain(anchor);
      } else {
        expect(fs.existsSync(path.resolve(path.dirname(docPath), file))).toBe(true);
      }
    });
  });
});
