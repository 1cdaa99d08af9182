import { StatsInputError, assertCount, assertSameLength } from './errors';
import type { IntervalOptions } from './normal';
import { type WilsonInterval, wilson } from './wilson';

/** A rate with its numerator, denominator and Wilson interval (GT6). */
export interface Rate {
  /** numerator / denominator, or null when the denominator is 0. */
  readonly value: number | null;
  readonly numerator: number;
  readonly denominator: number;
  readonly lower: number;
  readonly upper: number;
  /** Present only when `value` is null. */
  readonly reason?: 'empty';
}

/** The same rate carrying the full Wilson interval object, as `confusion` reports it. */
export interface RateWithInterval extends Rate {
  readonly interval: WilsonInterval;
}

function rate(numerator: number, denominator: number, opts: IntervalOptions): RateWithInterval {
  const interval = wilson(numerator, denominator, opts);
  const base = { value: interval.estimate, numerator, denominator, lower: interval.lower, upper: interval.upper };
  return interval.reason ? { ...base, reason: interval.reason, interval } : { ...base, interval };
}

function flat({ interval: _interval, ...r }: RateWithInterval): Rate {
  return r;
}

/** Sensitivity TP / (TP + FN): of the items the reference (the human) passed, the share the judge passed. */
export function sensitivity(tp: number, fn: number, opts: IntervalOptions = {}): Rate {
  assertCount(tp, 'tp');
  assertCount(fn, 'fn');
  return flat(rate(tp, tp + fn, opts));
}

/** Specificity TN / (TN + FP): of the items the reference failed, the share the judge failed too. */
export function specificity(tn: number, fp: number, opts: IntervalOptions = {}): Rate {
  assertCount(tn, 'tn');
  assertCount(fp, 'fp');
  return flat(rate(tn, tn + fp, opts));
}

export interface ConfusionCounts {
  readonly tp: number;
  readonly fp: number;
  readonly tn: number;
  readonly fn: number;
}

/** Aligned verdicts: `reference[i]` is the human label of item i, `predicted[i]` the judge's; true = pass. */
export interface ConfusionLabels {
  readonly reference: readonly boolean[];
  readonly predicted: readonly boolean[];
}

export interface ConfusionResult extends ConfusionCounts {
  readonly n: number;
  /** Percent agreement (TP + TN) / n, the J4 headline number. */
  readonly agreement: RateWithInterval;
  readonly sensitivity: RateWithInterval;
  readonly specificity: RateWithInterval;
}

/**
 * The 2 x 2 confusion matrix of a judge against a reference (J4). The human label is the reference and
 * "pass" is the positive class, so sensitivity is how often the judge passes what a human passes and
 * specificity how often it fails what a human fails. Every rate carries its denominator and interval,
 * and a rate with a zero denominator (e.g. no human fails) is null with reason `empty`.
 */
export function confusion(input: ConfusionLabels | ConfusionCounts, opts: IntervalOptions = {}): ConfusionResult {
  const counts = 'reference' in input ? countLabels(input) : input;
  const { tp, fp, tn, fn } = counts;
  assertCount(tp, 'tp');
  assertCount(fp, 'fp');
  assertCount(tn, 'tn');
  assertCount(fn, 'fn');
  const n = tp + fp + tn + fn;
  return {
    tp,
    fp,
    tn,
    fn,
    n,
    agreement: rate(tp + tn, n, opts),
    sensitivity: rate(tp, tp + fn, opts),
    specificity: rate(tn, tn + fp, opts),
  };
}

function countLabels({ reference, predicted }: ConfusionLabels): ConfusionCounts {
  if (!Array.isArray(reference) || !Array.isArray(predicted)) {
    throw new StatsInputError('NOT_BOOLEAN', 'confusion needs reference and predicted arrays of booleans');
  }
  assertSameLength(reference, predicted, 'confusion reference/predicted');
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  for (let i = 0; i < reference.length; i++) {
    const r = reference[i];
    const p = predicted[i];
    if (typeof r !== 'boolean' || typeof p !== 'boolean') {
      throw new StatsInputError('NOT_BOOLEAN', `confusion labels must be booleans (item ${i})`);
    }
    if (r && p) tp++;
    else if (r) fn++;
    else if (p) fp++;
    else tn++;
  }
  return { tp, fp, tn, fn };
}
