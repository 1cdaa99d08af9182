import { createHash } from 'node:crypto';
import { readReference } from '../../../../test/support/reference';
import {
  CalibrationInputError,
  CalibrationTargetError,
  MIN_CALIBRATION_TARGETS,
  calibrate,
  calibrationScopeOf,
  checkCalibrationSet,
  correctedJudgePassRate,
  correctedPassRatesByScope,
  resolveCalibrationTargets,
  rubricScope,
  suiteScope,
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

  it('Rogan-Gladen corrects the apparent pass rate with the measured sensitivity and specificity, with denominators', () => {
    const sens = tp / (tp + fn);
    const spec = tn / (tn + fp);
    const apparent = (tp + fp) / n;
    const corrected = correctedJudgePassRate({ passed: tp + fp, n }, report);
    expect(corrected.rate).toBeCloseTo(Math.min(1, Math.max(0, (apparent + spec - 1) / (sens + spec - 1))), 10);
    expect(corrected).toMatchObject({ apparent: { passed: tp + fp, n }, sensitivity: { x: tp, n: tp + fn }, specificity: { x: tn, n: tn + fp }, level: 0.95 });
    expect(corrected.lower).toBeLessThanOrEqual(corrected.rate as number);
    expect(corrected.upper).toBeGreaterThanOrEqual(corrected.rate as number);
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

  it('an all-pass human set is an insufficient set, even with perfect agreement', () => {
    const r = calibrate(repeat(50, item(true, true)));
    expect(r.status).toBe('insufficient_set');
    expect(r.reasons).toEqual(['human_labels_one_class', 'too_few_human_fails']);
    expect(r.kappa.value).toBeNull();
    expect(r.kappa.reason).toBe('expected_agreement_is_one');
    expect(r.specificity.value).toBeNull();
    expect(r.specificity.denominator).toBe(0);
  });

  it('an all-fail human set and an empty set are insufficient sets', () => {
    expect(calibrate([...repeat(10, item(false, false)), item(false, true)]).status).toBe('insufficient_set');
    const empty = calibrate([]);
    expect(empty.status).toBe('insufficient_set');
    expect(empty.reasons).toEqual(['empty_set', 'too_few_items', 'too_few_human_passes', 'too_few_human_fails']);
    expect(empty.agreement.value).toBeNull();
  });

  it('high agreement with kappa below target is not certified (class imbalance)', () => {
    // tp 170, fp 8, fn 8, tn 4: agreement 174/190, p_e = (178/190)^2 + (12/190)^2, kappa ~0.29.
    const items = [...repeat(170, item(true, true)), ...repeat(8, item(false, true)), ...repeat(8, item(true, false)), ...repeat(4, item(false, false))];
    const r = calibrate(items);
    expect(r.agreement.value).toBeCloseTo(174 / 190, 12);
    const pe = (178 / 190) ** 2 + (12 / 190) ** 2;
    expect(r.kappa.value).toBeCloseTo((174 / 190 - pe) / (1 - pe), 12);
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

describe('calibration set size (J4, issue 13): a tiny set certifies nothing, refused from the human labels alone', () => {
  const labels = (passes: number, fails: number) => [...Array.from({ length: passes }, () => true), ...Array.from({ length: fails }, () => false)];
  const defaults = resolveCalibrationTargets();

  it('2 items (1 pass, 1 fail) - the audit\'s certifying set - is insufficient on every count', () => {
    expect(checkCalibrationSet(labels(1, 1), defaults)).toEqual({
      n: 2,
      human_pass: 1,
      human_fail: 1,
      min_items: 50,
      min_per_class: 10,
      sufficient: false,
      reasons: ['too_few_items', 'too_few_human_passes', 'too_few_human_fails'],
    });
    // Even a judge that agrees on both: 2/2 with a 95% interval of 34-100% is not evidence.
    const r = calibrate([
      { human_pass: true, judge_pass: true, output_chars: 1 },
      { human_pass: false, judge_pass: false, output_chars: 1 },
    ]);
    expect(r.status).toBe('insufficient_set');
    expect(r.agreement.lower).toBeLessThan(0.35);
  });

  it('49 items is one short; 50 with 10 of each class is enough; 60 with 12 fails is enough', () => {
    expect(checkCalibrationSet(labels(30, 19), defaults)).toMatchObject({ n: 49, sufficient: false, reasons: ['too_few_items'] });
    expect(checkCalibrationSet(labels(40, 10), defaults)).toMatchObject({ n: 50, sufficient: true, reasons: [] });
    expect(checkCalibrationSet(labels(48, 12), defaults)).toMatchObject({ n: 60, human_fail: 12, sufficient: true });
    expect(checkCalibrationSet(labels(41, 9), defaults)).toMatchObject({ sufficient: false, reasons: ['too_few_human_fails'] });
  });

  it('a one-class set is refused the same way, however large', () => {
    expect(checkCalibrationSet(labels(0, 200), defaults)).toMatchObject({ sufficient: false, reasons: ['human_labels_one_class', 'too_few_human_passes'] });
  });

  it('the size targets may be raised, never lowered', () => {
    const raised = resolveCalibrationTargets({ min_items: 100, min_per_class: 30 });
    expect(checkCalibrationSet(labels(48, 12), raised)).toMatchObject({ sufficient: false, reasons: ['too_few_items', 'too_few_human_fails'] });
    expect(() => resolveCalibrationTargets({ min_items: 49 })).toThrow(expect.objectContaining({ code: 'TARGET_BELOW_MINIMUM' }));
    expect(() => resolveCalibrationTargets({ min_per_class: 9 })).toThrow(expect.objectContaining({ code: 'TARGET_BELOW_MINIMUM' }));
    expect(() => resolveCalibrationTargets({ min_items: 50.5 })).toThrow(expect.objectContaining({ code: 'TARGET_INVALID' }));
  });
});

describe('agreement on the lower bound of its interval (J4, issue 13)', () => {
  const item = (human_pass: boolean, judge_pass: boolean): CalibrationItem => ({ human_pass, judge_pass, output_chars: 10 });
  const repeat = (count: number, it: CalibrationItem) => Array.from({ length: count }, () => it);
  // 90 of 100 agree: the point 0.90 clears 0.85, Wilson's lower bound (0.8256) does not.
  const items = [...repeat(45, item(true, true)), ...repeat(45, item(false, false)), ...repeat(5, item(true, false)), ...repeat(5, item(false, true))];

  it('the point estimate certifies; the lower bound, asked for, does not', () => {
    expect(calibrate(items).status).toBe('certified');
    const strict = calibrate(items, { agreement_basis: 'lower_bound' });
    expect(strict.agreement.lower).toBeCloseTo(wilsonByHand(90, 100)[0], 12);
    expect(strict.agreement.lower).toBeLessThan(0.85);
    expect(strict).toMatchObject({ status: 'not_certified', reasons: ['agreement_below_target'], targets: { agreement_basis: 'lower_bound' } });
  });

  it('a larger set at the same agreement clears it on the lower bound too', () => {
    const big = [...repeat(450, item(true, true)), ...repeat(450, item(false, false)), ...repeat(50, item(true, false)), ...repeat(50, item(false, true))];
    const r = calibrate(big, { agreement_basis: 'lower_bound' });
    expect(wilsonByHand(900, 1000)[0]).toBeGreaterThan(0.85);
    expect(r.status).toBe('certified');
  });

  it('refuses an unknown basis', () => {
    expect(() => resolveCalibrationTargets({ agreement_basis: 'median' as never })).toThrow(expect.objectContaining({ code: 'TARGET_INVALID' }));
  });
});

describe('certification scope (J4, issue 13): pin + prompt version + rubric hash or suite', () => {
  const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

  it('a rubric is named by the SHA-256 of its UTF-8 text; a set with a suite is scoped to the suite', () => {
    expect(rubricScope('Résout la demande.')).toBe(`rubric:${sha('Résout la demande.')}`);
    expect(calibrationScopeOf({ suite_key: null, rubric: 'A' })).toBe(`rubric:${sha('A')}`);
    expect(calibrationScopeOf({ suite_key: 'support', rubric: 'A' })).toBe('suite:support');
    expect(rubricScope('A')).not.toBe(rubricScope('B'));
  });

  it('corrected rates: the suite scope corrects every judged case; else each certified rubric its own cases', () => {
    const cal = (se: [number, number], sp: [number, number]) => ({
      sensitivity: { value: se[0] / se[1], numerator: se[0], denominator: se[1], lower: 0, upper: 1 },
      specificity: { value: sp[0] / sp[1], numerator: sp[0], denominator: sp[1], lower: 0, upper: 1 },
    });
    const cases = [
      { rubric: 'A', passed: true },
      { rubric: 'A', passed: false },
      { rubric: 'A', passed: true },
      { rubric: 'B', passed: true },
    ];
    const bySuite = correctedPassRatesByScope('s', cases, new Map([[suiteScope('s'), cal([45, 50], [40, 50])]]));
    expect(bySuite).toHaveLength(1);
    expect(bySuite[0]).toMatchObject({ scope: 'suite:s', apparent: { passed: 3, n: 4 }, sensitivity: { x: 45, n: 50 }, specificity: { x: 40, n: 50 } });
    // Rogan-Gladen by hand: (0.75 + 0.8 - 1) / (0.9 + 0.8 - 1).
    expect(bySuite[0]!.rate).toBeCloseTo(0.55 / 0.7, 12);
    const byRubric = correctedPassRatesByScope('s', cases, new Map([[rubricScope('A'), cal([45, 50], [40, 50])]]));
    expect(byRubric.map((r) => [r.scope, r.apparent.passed, r.apparent.n])).toEqual([[rubricScope('A'), 2, 3]]);
    expect(correctedPassRatesByScope('s', cases, new Map())).toEqual([]);
  });
});

describe('correctedJudgePassRate reproduces the published worked examples (Lang & Reiczigel 2014)', () => {
  // Example 4 (first test) of the paper: 259 of 509, Se 84/127, Sp 96/109 -> 0.58 to 0.87 (2 dp), via the
  // calibration report's counts; Example 1: 4060 of 11284, Se 178/179, Sp 358/359 -> 0.349 to 0.372.
  const rate = (x: number, n: number) => ({ value: x / n, numerator: x, denominator: n, lower: 0, upper: 1 });
  it.each([
    [259, 509, [84, 127], [96, 109], [0.58, 0.87], 2],
    [4060, 11284, [178, 179], [358, 359], [0.349, 0.372], 3],
  ] as const)('%d of %d', (x, n, se, sp, published, digits) => {
    const r = correctedJudgePassRate({ passed: x, n }, { sensitivity: rate(se[0], se[1]), specificity: rate(sp[0], sp[1]) });
    expect(r.lower.toFixed(digits)).toBe(published[0].toFixed(digits));
    expect(r.upper.toFixed(digits)).toBe(published[1].toFixed(digits));
    expect(r.rate).toBeCloseTo((x / n + sp[0] / sp[1] - 1) / (se[0] / se[1] + sp[0] / sp[1] - 1), 12);
  });
});

describe('the PandaLM calibration set (J4, issue 13): its judge clears kappa, not agreement, so it is not certified', () => {
  interface PandaItem {
    readonly id: string;
    readonly human_pass: boolean;
    readonly judge_pass: boolean;
    readonly len_a: number;
    readonly votes: readonly number[];
  }
  const raw = readReference<PandaItem[]>('judge-calibration-2.json');

  it('849 items, computed here by hand and by calibrate alike; status not_certified for agreement only', () => {
    expect(raw).toHaveLength(849);
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
    const po = (tp + tn) / n;
    const h = (tp + fn) / n;
    const j = (tp + fp) / n;
    const pe = h * j + (1 - h) * (1 - j);
    const kappa = (po - pe) / (1 - pe);
    expect(tp + fn).toBe(403); // the README's balance: 403 human A, 446 human B
    expect(kappa).toBeGreaterThanOrEqual(0.6);
    expect(po).toBeLessThan(0.85);

    const r = calibrate(raw.map((i) => ({ human_pass: i.human_pass, judge_pass: i.judge_pass, output_chars: i.len_a })));
    expect(r.counts).toEqual({ tp, fn, fp, tn });
    expect(r.agreement.value).toBeCloseTo(po, 12);
    expect(r.kappa.value).toBeCloseTo(kappa, 12);
    expect(r.set).toMatchObject({ n: 849, sufficient: true });
    expect(r).toMatchObject({ status: 'not_certified', reasons: ['agreement_below_target'] });
  });
});

describe('calibration targets (J4): may be raised, never lowered', () => {
  it('defaults to the minimums', () => {
    expect(resolveCalibrationTargets()).toEqual({ agreement: 0.85, kappa: 0.6, min_items: 50, min_per_class: 10, agreement_basis: 'estimate' });
  });

  it('accepts raised targets', () => {
    expect(resolveCalibrationTargets({ agreement: 0.9, kappa: 0.7 })).toMatchObject({ agreement: 0.9, kappa: 0.7 });
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

describe('correctedJudgePassRate: undefined cases', () => {
  it('is null with the whole [0, 1] when the calibration has no specificity (no human fails)', () => {
    const r = calibrate(Array.from({ length: 5 }, () => ({ human_pass: true, judge_pass: true, output_chars: 1 })));
    expect(correctedJudgePassRate({ passed: 5, n: 10 }, r)).toMatchObject({ rate: null, lower: 0, upper: 1, reason: 'empty' });
  });

  it('is null for a judge no better than chance', () => {
    const chance = { sensitivity: { value: 0.5, numerator: 1, denominator: 2, lower: 0, upper: 1 }, specificity: { value: 0.5, numerator: 1, denominator: 2, lower: 0, upper: 1 } };
    expect(correctedJudgePassRate({ passed: 5, n: 10 }, chance)).toMatchObject({ rate: null, reason: 'youden_not_positive' });
  });
});
