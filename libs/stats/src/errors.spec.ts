import {
  StatsInputError,
  type StatsErrorCode,
  cohenKappa,
  confusion,
  createRng,
  kappaFromLabels,
  leastSquaresTrend,
  mean,
  newcombeDiff,
  normalQuantile,
  pearson,
  pointBiserial,
  roganGladen,
  seededSample,
  sensitivity,
  specificity,
  wilson,
  zForConfidence,
} from './index';

function thrownCode(fn: () => unknown): StatsErrorCode | 'no error' | 'not a StatsInputError' {
  try {
    fn();
  } catch (e) {
    return e instanceof StatsInputError ? e.code : 'not a StatsInputError';
  }
  return 'no error';
}

describe('invalid input throws StatsInputError with a stable code', () => {
  const cases: [string, () => unknown, StatsErrorCode][] = [
    ['wilson: negative successes', () => wilson(-1, 5), 'NEGATIVE_COUNT'],
    ['wilson: negative n', () => wilson(0, -5), 'NEGATIVE_COUNT'],
    ['wilson: successes > n', () => wilson(6, 5), 'SUCCESSES_EXCEED_N'],
    ['wilson: fractional successes', () => wilson(1.5, 5), 'NOT_INTEGER'],
    ['wilson: fractional n', () => wilson(1, 5.5), 'NOT_INTEGER'],
    ['wilson: unsafe integer n', () => wilson(1, 2 ** 60), 'NOT_INTEGER'],
    ['wilson: NaN', () => wilson(Number.NaN, 5), 'NOT_FINITE'],
    ['wilson: infinite n', () => wilson(1, Number.POSITIVE_INFINITY), 'NOT_FINITE'],
    ['wilson: confidence 1', () => wilson(1, 5, { confidence: 1 }), 'INVALID_CONFIDENCE'],
    ['wilson: confidence 0', () => wilson(1, 5, { confidence: 0 }), 'INVALID_CONFIDENCE'],
    ['wilson: confidence 95 (percent, not a fraction)', () => wilson(1, 5, { confidence: 95 }), 'INVALID_CONFIDENCE'],
    ['zForConfidence: NaN', () => zForConfidence(Number.NaN), 'INVALID_CONFIDENCE'],
    ['normalQuantile: p = 1', () => normalQuantile(1), 'INVALID_PROBABILITY'],
    ['normalQuantile: p = 0', () => normalQuantile(0), 'INVALID_PROBABILITY'],
    ['newcombeDiff: x2 > n2', () => newcombeDiff(1, 2, 3, 2), 'SUCCESSES_EXCEED_N'],
    ['newcombeDiff: negative x1', () => newcombeDiff(-1, 2, 1, 2), 'NEGATIVE_COUNT'],
    ['cohenKappa: empty table', () => cohenKappa([]), 'NOT_SQUARE'],
    ['cohenKappa: 1 x 2 table', () => cohenKappa([[1, 2]]), 'NOT_SQUARE'],
    ['cohenKappa: ragged table', () => cohenKappa([[1, 2], [3]]), 'NOT_SQUARE'],
    ['cohenKappa: negative cell', () => cohenKappa([[1, -2], [3, 4]]), 'NEGATIVE_COUNT'],
    ['cohenKappa: fractional cell', () => cohenKappa([[1, 2.5], [3, 4]]), 'NOT_INTEGER'],
    ['kappaFromLabels: lengths differ', () => kappaFromLabels([1, 2], [1]), 'LENGTH_MISMATCH'],
    ['sensitivity: negative tp', () => sensitivity(-1, 3), 'NEGATIVE_COUNT'],
    ['specificity: fractional fp', () => specificity(3, 0.5), 'NOT_INTEGER'],
    ['confusion: negative count', () => confusion({ tp: 1, fp: -1, tn: 0, fn: 0 }), 'NEGATIVE_COUNT'],
    ['confusion: lengths differ', () => confusion({ reference: [true], predicted: [] }), 'LENGTH_MISMATCH'],
    [
      'confusion: non-boolean label',
      () => confusion({ reference: [1 as unknown as boolean], predicted: [true] }),
      'NOT_BOOLEAN',
    ],
    ['pearson: lengths differ', () => pearson([1, 2, 3], [1, 2]), 'LENGTH_MISMATCH'],
    ['pearson: NaN', () => pearson([1, Number.NaN], [1, 2]), 'NOT_FINITE'],
    ['pearson: Infinity', () => pearson([1, 2], [1, Number.POSITIVE_INFINITY]), 'NOT_FINITE'],
    ['pointBiserial: 2 is not binary', () => pointBiserial([0, 2 as 1], [1, 2]), 'NOT_BINARY'],
    ['pointBiserial: lengths differ', () => pointBiserial([0, 1], [1]), 'LENGTH_MISMATCH'],
    ['roganGladen: p > 1', () => roganGladen(1.2, 0.9, 0.9), 'INVALID_PROBABILITY'],
    ['roganGladen: negative sensitivity', () => roganGladen(0.5, -0.1, 0.9), 'INVALID_PROBABILITY'],
    ['roganGladen: NaN specificity', () => roganGladen(0.5, 0.9, Number.NaN), 'NOT_FINITE'],
    ['leastSquaresTrend: NaN', () => leastSquaresTrend([0.5, Number.NaN]), 'NOT_FINITE'],
    ['leastSquaresTrend: negative epsilon', () => leastSquaresTrend([0.5, 0.6], { flatEpsilon: -1 }), 'INVALID_OPTION'],
    ['leastSquaresTrend: minPoints 1', () => leastSquaresTrend([0.5, 0.6], { minPoints: 1 }), 'INVALID_OPTION'],
    ['mean: Infinity', () => mean([1, Number.NEGATIVE_INFINITY]), 'NOT_FINITE'],
    ['seededSample: negative size', () => seededSample([1, 2, 3], -1, 's'), 'INVALID_SIZE'],
    ['seededSample: fractional size', () => seededSample([1, 2, 3], 1.5, 's'), 'INVALID_SIZE'],
    ['seededSample: empty seed', () => seededSample([1, 2, 3], 1, ''), 'INVALID_SEED'],
    ['createRng: non-string seed', () => createRng(42 as unknown as string), 'INVALID_SEED'],
    ['createRng: nextInt(0)', () => createRng('s').nextInt(0), 'INVALID_OPTION'],
  ];

  it.each(cases)('%s', (_name, fn, code) => {
    expect(thrownCode(fn)).toBe(code);
  });

  it('is an Error whose message starts with its code', () => {
    let caught: unknown;
    try {
      wilson(7, 3);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Error);
    expect(caught).toBeInstanceOf(StatsInputError);
    expect((caught as StatsInputError).name).toBe('StatsInputError');
    expect((caught as StatsInputError).message).toMatch(/^SUCCESSES_EXCEED_N: /);
  });
});
