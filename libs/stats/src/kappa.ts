import { StatsInputError, type UndefinedReason, assertCount, assertSameLength } from './errors';

/** Cohen's kappa with the two agreement proportions it is built from (J4). */
export interface KappaResult {
  /** (p_o - p_e) / (1 - p_e), or null when undefined. */
  readonly kappa: number | null;
  /** Observed agreement p_o: the share of items both raters put in the same class. Null when n = 0. */
  readonly observed: number | null;
  /** Chance agreement p_e from the two raters' marginals. Null when n = 0. */
  readonly expected: number | null;
  readonly n: number;
  /** `empty` (n = 0) or `expected_agreement_is_one` (both raters used one and the same class throughout). */
  readonly reason?: Extract<UndefinedReason, 'empty' | 'expected_agreement_is_one'>;
}

/** Products of counts up to this total stay exact in a double (n^2 < 2^53). */
const EXACT_TOTAL_LIMIT = Math.floor(Math.sqrt(Number.MAX_SAFE_INTEGER));

/**
 * Cohen (1960) kappa for two raters over k >= 1 classes. `table[i][j]` counts the items rater A put in
 * class i and rater B in class j.
 *
 * When p_e = 1 (every item in one and the same class for both raters) kappa is 0/0. The result is then
 * null with `expected_agreement_is_one`, neither 1 (nltk) nor an error (DescTools): perfect agreement on a
 * single class says nothing about the rater's ability to tell classes apart (J4: a one-class set certifies
 * nothing).
 */
export function cohenKappa(table: readonly (readonly number[])[]): KappaResult {
  if (!Array.isArray(table) || table.length === 0) {
    throw new StatsInputError('NOT_SQUARE', 'kappa needs a non-empty k x k table (k >= 1)');
  }
  const k = table.length;
  const rows = new Array<number>(k).fill(0);
  const cols = new Array<number>(k).fill(0);
  let agree = 0;
  let n = 0;
  for (let i = 0; i < k; i++) {
    const row = table[i];
    if (!Array.isArray(row) || row.length !== k) {
      throw new StatsInputError('NOT_SQUARE', `kappa table row ${i} has ${row?.length ?? 'no'} cells, expected ${k}`);
    }
    for (let j = 0; j < k; j++) {
      const c = row[j];
      assertCount(c, `table[${i}][${j}]`);
      rows[i] += c;
      cols[j] += c;
      n += c;
      if (i === j) agree += c;
    }
  }
  if (!Number.isSafeInteger(n)) {
    throw new StatsInputError('NOT_INTEGER', `kappa table total ${n} exceeds the exactly representable range`);
  }
  if (n === 0) return { kappa: null, observed: null, expected: null, n, reason: 'empty' };

  const observed = agree / n;
  let expected = 0;
  for (let i = 0; i < k; i++) expected += (rows[i] / n) * (cols[i] / n);

  // p_e = 1 exactly when one class holds all of both raters' marks; test that on the counts, not on a
  // floating-point p_e that may land a rounding error away from 1.
  if (rows.some((r, i) => r === n && cols[i] === n)) {
    return { kappa: null, observed, expected: 1, n, reason: 'expected_agreement_is_one' };
  }

  let kappa: number;
  if (n <= EXACT_TOTAL_LIMIT) {
    // Integer form: kappa = (n * agree - sum r_i c_i) / (n^2 - sum r_i c_i), every term exact, so the only
    // rounding is the final division (and kappa is exactly symmetric under transposition).
    let chance = 0;
    for (let i = 0; i < k; i++) chance += rows[i] * cols[i];
    kappa = (n * agree - chance) / (n * n - chance);
  } else {
    kappa = (observed - expected) / (1 - expected);
  }
  return { kappa, observed, expected, n };
}

/** A k x k contingency table from two raters' labels, classes in order of first appearance (A, then B). */
export interface LabelTable<T> {
  readonly classes: T[];
  readonly table: number[][];
}

export function contingencyTable<T>(a: readonly T[], b: readonly T[]): LabelTable<T> {
  assertSameLength(a, b, 'rater labels');
  const index = new Map<T, number>();
  const classes: T[] = [];
  for (const label of [...a, ...b]) {
    if (!index.has(label)) {
      index.set(label, classes.length);
      classes.push(label);
    }
  }
  const table = classes.map(() => new Array<number>(classes.length).fill(0));
  for (let i = 0; i < a.length; i++) {
    table[index.get(a[i]) as number][index.get(b[i]) as number] += 1;
  }
  return { classes, table };
}

/**
 * Kappa from two aligned label lists (item i labelled a[i] by rater A and b[i] by rater B). Labels are
 * compared with SameValueZero (as Map keys), so use primitives. Empty lists give kappa null, `empty`.
 */
export function kappaFromLabels<T>(a: readonly T[], b: readonly T[]): KappaResult & LabelTable<T> {
  const built = contingencyTable(a, b);
  if (built.classes.length === 0) {
    return { kappa: null, observed: null, expected: null, n: 0, reason: 'empty', ...built };
  }
  return { ...cohenKappa(built.table), ...built };
}
