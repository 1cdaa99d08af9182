import * as stats from './index';

describe('@evals/stats public API', () => {
  it('exports every function other modules and external checks call, by its exact name', () => {
    const functions = [
      'wilson',
      'newcombeDiff',
      'cohenKappa',
      'kappaFromLabels',
      'contingencyTable',
      'confusion',
      'sensitivity',
      'specificity',
      'pearson',
      'pointBiserial',
      'roganGladen',
      'leastSquaresTrend',
      'mean',
      'seededSample',
      'createRng',
      'cyrb128',
      'normalQuantile',
      'zForConfidence',
      'normalUpperTail',
      'holm',
      'newcombeDiffPValue',
      'pairedDiffPValue',
    ];
    for (const name of functions) expect([name, typeof (stats as Record<string, unknown>)[name]]).toEqual([name, 'function']);
    expect(typeof stats.StatsInputError).toBe('function');
    expect(stats.Z_95).toBe(1.959963984540054);
    expect(stats.TREND_FLAT_EPSILON).toBe(0.005);
  });

  it('is reachable through the @evals/stats path alias', async () => {
    const viaAlias = await import('@evals/stats');
    expect(viaAlias.wilson).toBe(stats.wilson);
  });
});
