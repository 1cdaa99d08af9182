import fc from 'fast-check';
import { cohenKappa, contingencyTable, kappaFromLabels } from './kappa';

const squareTable = fc
  .integer({ min: 1, max: 5 })
  .chain((k) =>
    fc.array(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: k, maxLength: k }), { minLength: k, maxLength: k }),
  );

const transpose = (t: number[][]) => t.map((row, i) => row.map((_, j) => (t[j] as number[])[i] as number));

describe('cohenKappa (J4)', () => {
  it('J4: k = 3 classes matches a hand computation', () => {
    // rows (rater A) 15, 20, 15; columns (rater B) 16, 20, 14; n = 50; diagonal 35.
    // p_o = 35/50 = 0.7; p_e = (15*16 + 20*20 + 15*14)/50^2 = 850/2500 = 0.34;
    // kappa = (0.7 - 0.34)/(1 - 0.34) = 0.36/0.66 = 6/11.
    const r = cohenKappa([
      [10, 2, 3],
      [4, 15, 1],
      [2, 3, 10],
    ]);
    expect(r.n).toBe(50);
    expect(r.observed).toBe(0.7);
    expect(r.expected).toBeCloseTo(0.34, 15);
    expect(r.kappa).toBe(6 / 11);
    expect(r.reason).toBeUndefined();
  });

  it('J4: the same k = 3 data as labels gives the same kappa and table', () => {
    const a: string[] = [];
    const b: string[] = [];
    const table = [
      [10, 2, 3],
      [4, 15, 1],
      [2, 3, 10],
    ];
    const classes = ['pass', 'partial', 'fail'];
    table.forEach((row, i) =>
      row.forEach((count, j) => {
        for (let c = 0; c < count; c++) {
          a.push(classes[i] as string);
          b.push(classes[j] as string);
        }
      }),
    );
    const r = kappaFromLabels(a, b);
    expect(r.classes).toEqual(classes);
    expect(r.table).toEqual(table);
    expect(r.kappa).toBe(6 / 11);
  });

  it('perfect agreement over two or more classes is kappa 1; systematic disagreement is negative', () => {
    expect(cohenKappa([[3, 0], [0, 7]]).kappa).toBe(1);
    expect(cohenKappa([[0, 5], [5, 0]]).kappa).toBe(-1);
  });

  it('J4: one class used by both raters throughout is undefined, not 1 (expected_agreement_is_one)', () => {
    expect(cohenKappa([[12]])).toStrictEqual({
      kappa: null,
      observed: 1,
      expected: 1,
      n: 12,
      reason: 'expected_agreement_is_one',
    });
    expect(cohenKappa([[0, 0], [0, 9]])).toMatchObject({ kappa: null, reason: 'expected_agreement_is_one' });
    expect(kappaFromLabels([true, true], [true, true])).toMatchObject({ kappa: null, reason: 'expected_agreement_is_one' });
  });

  it('one rater constant but the other not is defined (kappa 0: no agreement beyond chance)', () => {
    const r = cohenKappa([[6, 4], [0, 0]]);
    expect(r.kappa).toBe(0);
    expect(r.reason).toBeUndefined();
  });

  it('n = 0 is null with reason empty', () => {
    expect(cohenKappa([[0, 0], [0, 0]])).toStrictEqual({ kappa: null, observed: null, expected: null, n: 0, reason: 'empty' });
    expect(kappaFromLabels([], [])).toMatchObject({ kappa: null, n: 0, reason: 'empty', classes: [], table: [] });
  });

  it('is symmetric under transposition (swapping the raters)', () => {
    fc.assert(
      fc.property(squareTable, (t) => {
        const a = cohenKappa(t);
        const b = cohenKappa(transpose(t));
        expect(b.kappa).toBe(a.kappa);
        expect(b.observed).toBe(a.observed);
        expect(b.reason).toBe(a.reason);
      }),
    );
  });

  it('is invariant under renaming the classes, lies in [-1, 1], and is 1 only with no disagreement', () => {
    fc.assert(
      fc.property(squareTable, fc.infiniteStream(fc.nat()), (t, stream) => {
        const k = t.length;
        const keys = [...stream.take(k)];
        const perm = Array.from({ length: k }, (_, i) => i).sort((x, y) => (keys[x] as number) - (keys[y] as number) || x - y);
        const renamed = perm.map((i) => perm.map((j) => (t[i] as number[])[j] as number));
        const a = cohenKappa(t);
        expect(cohenKappa(renamed).kappa).toBe(a.kappa);
        if (a.kappa !== null) {
          expect(a.kappa).toBeGreaterThanOrEqual(-1);
          expect(a.kappa).toBeLessThanOrEqual(1);
          const offDiagonal = t.some((row, i) => row.some((c, j) => i !== j && c > 0));
          expect(a.kappa === 1).toBe(!offDiagonal);
        }
      }),
    );
  });

  it('kappaFromLabels agrees with cohenKappa on the built table and is symmetric in the raters', () => {
    const labels = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('a', 'b', 'c')), { maxLength: 60 });
    fc.assert(
      fc.property(labels, (pairs) => {
        const a = pairs.map((p) => p[0]);
        const b = pairs.map((p) => p[1]);
        const r = kappaFromLabels(a, b);
        expect(r.n).toBe(pairs.length);
        if (pairs.length > 0) expect(r.kappa).toBe(cohenKappa(contingencyTable(a, b).table).kappa);
        expect(kappaFromLabels(b, a).kappa).toBe(r.kappa);
      }),
    );
  });
});
