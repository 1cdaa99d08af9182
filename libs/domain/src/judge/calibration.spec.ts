import { readReference } from '../../../../test/support/reference';
import {
  CalibrationInputError,
  CalibrationTargetError,
  MIN_CALIBRATION_TARGETS,
  calibrate,
  correctedPassRate,
  resolveCalibrationTargets,
  type CalibrationItem,
} from './calibration';

interface MtBenchItem {
  readonly id: string;
  readonly human_pass: boolean;
  readonly judge_pass: boolean;
  readonly len_a: number;
  readonly len_b: number;
}

function loadMtBench(): MtBenchItem[] {
  return readReference<MtBenchItem[]>('mtbench-calibration.json');
}

/** Wilson score interval written out here, independently of @evals/stats (z for 95%). */
function wilsonByHand(k: number, n: number): [number, number] {
  const z = 1.959963984540054;
  const p = k / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = ((z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n)));
  return [centre - half, centre + half];
}

/** Point-biserial r = (M1 - M0) / s_n * sqrt(p q), the textbook form (population SD), not Pearson's. */
function pointBiserialByHand(flags: boolean[], xs: number[]): number {
  const n = xs.length;
  const ones = xs.filter((_, i) => flags[i]);
  const zeros = xs.filter((_, i) => !flags[i]);
  const m1 = ones.reduce((a, b) => a + b, 0) / ones.length;
  const m0 = zeros.reduce((a, b) => a + b, 0) / zeros.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sn = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / n);
  const p = ones.length / n;
  return ((m1 - m0) / sn) * Math.sqrt(p * (1 - p));
}

describe('calibrate (J4) on the MT-Bench human judgments', () => {
  const raw = loadMtBench();
  const items: CalibrationItem[] = raw.map((r) => ({ human_pass: r.human_pass, judge_pass: r.judge_pass, output_chars: r.len_a }));

  // The raw counts, tallied here.
  let tp = 0;
  let fn = 0;
  let fp = 0;
  let tn = 0;
  for (const r of raw) {
    if (r.human_pass && r.judge_pass) tp++;
    else if (r.human_pass) fn++;
    else if (r.judge_pass) fp++;
    else tn++;
  }
  const n = raw.length;
  const report = calibrate(items);

  it('has a real, imbalanced set to measure', () => {
    expect(n).toBeGreaterThan(1000);
    expect(tp + fn).toBeGreaterThan(0);
    expect(fp + tn).toBeGreaterThan(0);
  });

  it('confusion counts, agreement with its Wilson interval, sensitivity and specificity with denominators', () => {
    expect(report.n).toBe(n);
    expect(report.counts).toEqual({ tp, fp, tn, fn });
    expect(report.agreement.numerator).toBe(tp + tn);
    expect(report.agreement.denominator).toBe(n);
    expect(report.agreement.value).toBeCloseTo((tp + tn) / n, 12);
    const [lo, hi] = wilsonByHand(tp + tn, n);
    expect(report.agreement.lower).toBeCloseTo(lo, 9);
    expect(report.agreement.upper).toBeCloseTo(hi, 9);
    expect(report.sensitivity).toMatchObject({ numerator: tp, denominator: tp + fn });
    expect(report.sensitivity.value).toBeCloseTo(tp / (tp + fn), 12);
    expect(report.specificity).toMatchObject({ numerator: tn, denominator: tn + fp });
    expect(report.specificity.value).toBeCloseTo(tn / (tn + fp), 12);
    const [slo, shi] = wilsonByHand(tp, tp + fn);
    expect(report.sensitivity.lower).toBeCloseTo(slo, 9);
    expect(report.sensitivity.upper).toBeCloseTo(shi, 9);
  });

  it("Cohen's kappa from the marginals", () => {
    const po = (tp + tn) / n;
    const humanPass = (tp + fn) / n;
    const judgePass = (tp + fp) / n;
    const pe = humanPass * judgePass + (1 - humanPass) * (1 - judgePass);
    expect(report.kappa.value).toBeCloseTo((po - pe) / (1 - pe), 10);
    expect(report.kappa.observed).toBeCloseTo(po, 12);
    expect(report.kappa.expected).toBeCloseTo(pe, 12);
  });

  it('verbosity bias: point-biserial of length against the judge verdict and against the human label', () => {
    const lengths = raw.map((r) => r.len_a);
    expect(report.verbosity_bias.judge.r).toBeCloseTo(pointBiserialByHand(raw.map((r) => r.judge_pass), lengths), 10);
    expect(report.verbosity_bias.human.r).toBeCloseTo(pointBiserialByHand(raw.map((r) => r.human_pass), lengths), 10);
    expect(report.verbosity_bias.judge.n).toBe(n);
    expect(report.verbosity_bias.excess).toBeCloseTo((report.verbosity_bias.judge.r as number) - (report.verbosity_bias.human.r as number), 12);
  });

  it('status follows the rule: certified only with agreement >= 0.85 and a defined kappa >= 0.6', () => {
    const agreementOk = (tp + tn) / n >= 0.85;
    const po = (tp + tn) / n;
    const h = (tp + fn) / n;
    const j = (tp + fp) / n;
    const pe = h * j + (1 - h) * (1 - j);
    const kappaOk = (po - pe) / (1 - pe) >= 0.6;
    expect(report.status).toBe(agreementOk && kappaOk ? 'certified' : 'not_certified');
    expect(report.reasons.includes('agreement_below_target')).toBe(!agreementOk);
    expect(report.reasons.includes('kappa_below_target')).toBe(!kappaOk);
    expect(report.targets).toEqual(MIN_CALIBRATION_TARGETS);
  });

  it('a raised target is applied', () => {
    const strict = calibrate(items, { agreement: 0.99 });
    expect(strict.targets.agreement).toBe(0.99);
    expect(strict.reasons).toContain('agreement_below_target');
  });

  it('Rogan-Gladen corrects the apparent pass rate with the measured sensitivity and specificity', () => {
    const sens = tp / (tp + fn);
    const spec = tn / (tn + fp);
    const apparent = (tp + fp) / n;
    const corrected = correctedPassRate(apparent, report);
    expect(corrected.corrected).toBeCloseTo(Math.min(1, Math.max(0, (apparent + spec - 1) / (sens + spec - 1))), 10);
  });
});

describe('calibrate (J4): certification rule', () => {
  const item = (human_pass: boolean, judge_pass: boolean, output_chars = 100): CalibrationItem => ({ human_pass, judge_pass, output_chars });
  const repeat = (count: number, it: CalibrationItem) => Array.from({ length: count }, () => it);

  it('certifies a judge that agrees well beyond chance', () => {
    const items = [...repeat(45, item(true, true)), ...repeat(45, item(false, false)), ...repeat(5, item(true, false)), ...repeat(5, item(false, true))];
    const r = calibrate(items);
    expect(r.agreement.value).toBe(0.9);
    expect(r.kappa.value).toBeCloseTo(0.8, 12);
    expect(r.status).toBe('certified');
    expect(r.reasons).toEqual([]);
  });

  it('an all-pass human set is not certifiable, even with perfect agreement', () => {
    const r = calibrate(repeat(50, item(true, true)));
    expect(r.status).toBe('not_certifiable');
    expect(r.reasons).toEqual(['human_labels_one_class']);
    expect(r.kappa.value).toBeNull();
    expect(r.kappa.reason).toBe('expected_agreement_is_one');
    expect(r.specificity.value).toBeNull();
    expect(r.specificity.denominator).toBe(0);
  });

  it('an all-fail human set and an empty set are not certifiable', () => {
    expect(calibrate([...repeat(10, item(false, false)), item(false, true)]).status).toBe('not_certifiable');
    const empty = calibrate([]);
    expect(empty.status).toBe('not_certifiable');
    expect(empty.reasons).toEqual(['empty_set']);
    expect(empty.agreement.value).toBeNull();
  });

  it('high agreement with kappa below target is not certified (class imbalance)', () => {
    const items = [...repeat(90, item(true, true)), ...repeat(5, item(false, true)), ...repeat(4, item(true, false)), item(false, false)];
    const r = calibrate(items);
    expect(r.agreement.value).toBeCloseTo(0.91, 12);
    expect(r.kappa.value as number).toBeLessThan(0.6);
    expect(r.status).toBe('not_certified');
    expect(r.reasons).toEqual(['kappa_below_target']);
  });

  it('a judge that always passes has kappa 0 when humans use both classes', () => {
    const r = calibrate([...repeat(90, item(true, true)), ...repeat(10, item(false, true))]);
    expect(r.kappa.value).toBe(0);
    expect(r.reasons).toEqual(['kappa_below_target']);
    expect(r.verbosity_bias.judge.r).toBeNull();
    expect(r.verbosity_bias.judge.reason).toBe('constant_input');
  });

  it('shows a length-biased judge: passes long outputs whatever the humans say', () => {
    const items: CalibrationItem[] = [];
    for (let i = 0; i < 40; i++) {
      const long = i % 2 === 0;
      const humanPass = i % 4 < 2; // independent of length
      items.push(item(humanPass, long, long ? 2000 + i : 100 + i));
    }
    const r = calibrate(items);
    expect(r.verbosity_bias.judge.r as number).toBeGreaterThan(0.95);
    expect(Math.abs(r.verbosity_bias.human.r as number)).toBeLessThan(0.2);
    expect(r.verbosity_bias.excess as number).toBeGreaterThan(0.8);
  });
});

describe('calibration targets (J4): may be raised, never lowered', () => {
  it('defaults to the minimums', () => {
    expect(resolveCalibrationTargets()).toEqual({ agreement: 0.85, kappa: 0.6 });
  });

  it('accepts raised targets', () => {
    expect(resolveCalibrationTargets({ agreement: 0.9, kappa: 0.7 })).toEqual({ agreement: 0.9, kappa: 0.7 });
  });

  it.each([
    [{ agreement: 0.8 }],
    [{ kappa: 0.5 }],
    [{ agreement: 0.849999 }],
  ])('refuses a lowered target %j with TARGET_BELOW_MINIMUM', (targets) => {
    const run = () => calibrate([{ human_pass: true, judge_pass: true, output_chars: 1 }], targets);
    expect(run).toThrow(CalibrationTargetError);
    try {
      run();
    } catch (e) {
      expect((e as CalibrationTargetError).code).toBe('TARGET_BELOW_MINIMUM');
    }
  });

  it.each([[{ agreement: 1.2 }], [{ kappa: Number.NaN }], [{ agreement: -1 }]])('refuses an invalid target %j', (targets) => {
    expect(() => resolveCalibrationTargets(targets)).toThrow(expect.objectContaining({ code: 'TARGET_INVALID' }));
  });

  it('refuses malformed items', () => {
    expect(() => calibrate([{ human_pass: 'yes', judge_pass: true, output_chars: 1 } as unknown as CalibrationItem])).toThrow(CalibrationInputError);
    expect(() => calibrate([{ human_pass: true, judge_pass: true, output_chars: -1 }])).toThrow(CalibrationInputError);
  });
});

describe('correctedPassRate', () => {
  it('is null when the calibration has no specificity (no human fails)', () => {
    const r = calibrate(Array.from({ length: 5 }, () => ({ human_pass: true, judge_pass: true, output_chars: 1 })));
    expect(correctedPassRate(0.5, r)).toEqual({ apparent: 0.5, corrected: null, reason: 'specificity_undefined' });
  });

  it('is null for a judge no better than chance', () => {
    const chance = { sensitivity: { value: 0.5, numerator: 1, denominator: 2, lower: 0, upper: 1 }, specificity: { value: 0.5, numerator: 1, denominator: 2, lower: 0, upper: 1 } };
    expect(correctedPassRate(0.5, chance)).toEqual({ apparent: 0.5, corrected: null, reason: 'youden_not_positive' });
  });
});
