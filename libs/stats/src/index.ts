/**
 * @evals/stats: the statistics behind every number this service reports (docs/statistics.md). Pure
 * functions, no I/O, no clock, no Math.random. Undefined results are `null` with a `reason`; invalid input
 * throws `StatsInputError` with a stable `code`.
 */
export { StatsInputError, type StatsErrorCode, type UndefinedReason } from './errors';
export { Z_95, DEFAULT_CONFIDENCE, normalQuantile, normalUpperTail, zForConfidence, criticalValue, type IntervalOptions, type CriticalValueOptions } from './normal';
export { wilson, type WilsonInterval } from './wilson';
export { newcombeDiff, type ProportionDifference } from './newcombe';
export { cohenKappa, kappaFromLabels, contingencyTable, type KappaResult, type LabelTable } from './kappa';
export {
  confusion,
  sensitivity,
  specificity,
  type ConfusionCounts,
  type ConfusionLabels,
  type ConfusionResult,
  type Rate,
  type RateWithInterval,
} from './confusion';
export { pearson, pointBiserial, type CorrelationResult } from './correlation';
export { roganGladen, type RoganGladenResult } from './rogan-gladen';
export { leastSquaresTrend, TREND_FLAT_EPSILON, type TrendDirection, type TrendOptions, type TrendResult } from './trend';
export { mean } from './mean';
export { createRng, seededSample, cyrb128, type Rng } from './sampling';
export { pairedDiff, type PairedCounts, type PairedDiffOptions, type PairedDifference, type PairedMethod } from './paired';
export {
  sampleSizeTwoProportions,
  sampleSizePaired,
  type SampleSizeMethod,
  type SampleSizePowerOptions,
  type SampleSizeUndefinedReason,
  type TwoProportionsSampleSizeInput,
  type TwoProportionsSampleSize,
  type PairedSampleSizeInput,
  type PairedSampleSize,
} from './sample-size';
export { holm } from './holm';
export { newcombeDiffPValue, pairedDiffPValue, type IntervalPValue } from './pvalue';
export { correctedPassRate, type CalibrationCount, type CorrectedPassRate, type CorrectedPassRateInput, type CorrectedPassRateOptions } from './corrected-pass-rate';
