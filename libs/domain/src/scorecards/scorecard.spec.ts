import { wilson } from '@evals/stats';
import { correctedJudgePassRate } from '../judge/calibration';
import { buildScorecard, SCORECARD_CSV_COLUMNS, scorecardsToCsv, type ScorecardRun } from './scorecard';

const run = (i: number, passed: number, n = 20, verdict = 'no_regression'): ScorecardRun => ({
  run_id: `r${i}`,
  suite_key: 'support',
  suite_version: 1 + Math.floor(i / 3),
  subject_kind: 'agent',
  subject_id: 'bot',
  completed_at: `2026-11-30T0${i}:00:00.000Z`,
  n,
  passed,
  score: passed / n,
  verdict,
});

describe('unit: scorecards (SC1, GT6)', () => {
  // Out of order on purpose: the scorecard orders by completion time.
  const runs = [run(3, 12, 20, 'regressed'), run(0, 18), run(2, 15), run(1, 17)];
  const card = buildScorecard(runs)!;

  it('shows an incomplete or expired run as the latest, but leaves it out of the pooled rate, the mean and the trend (R7)', () => {
    // r4 skipped its judge: 4/20 with 14 cases unscored. Pooled, it would read as a collapse.
    const withPartial = buildScorecard([...runs, { ...run(4, 4), completeness: 'incomplete' }, { ...run(5, 0), completeness: 'expired' }])!;
    expect(withPartial.runs).toBe(6);
    expect(withPartial.runs_incomplete).toBe(2);
    expect(withPartial.latest_run_id).toBe('r5');
    expect(withPartial.latest_completeness).toBe('expired');
    expect(withPartial.overall_pass_rate).toEqual(card.overall_pass_rate);
    expect(withPartial.mean_score).toBe(card.mean_score);
    expect(withPartial.trend).toMatchObject({ slope_per_run: card.trend.slope_per_run, runs: 4, last_run_id: 'r3' });
    expect(card.runs_incomplete).toBe(0);
    expect(card.latest_completeness).toBe('complete');
  });

  it('an inconclusive latest drop carries the cases per run that would resolve it; any other verdict none (G8)', () => {
    const noisy = buildScorecard([...runs, { ...run(4, 17, 20, 'inconclusive_noise'), comparison: { cases_needed: { per_run: 620, have: 20 } } }])!;
    expect(noisy.latest_cases_needed).toBe(620);
    const fields = Object.fromEntries(SCORECARD_CSV_COLUMNS.map((h, i) => [h, scorecardsToCsv([noisy]).split('\r\n')[1]!.split(',')[i]]));
    expect(fields['latest_cases_needed']).toBe('620');
    expect(card.latest_cases_needed).toBeNull();
    expect(buildScorecard([{ ...run(0, 18), comparison: { cases_needed: { per_run: 5 } } }])!.latest_cases_needed).toBeNull();
  });

  it('counts runs, takes the latest by completion time, pools the overall pass rate', () => {
    expect(card.runs).toBe(4);
    expect(card.latest_run_id).toBe('r3');
    expect(card.latest_verdict).toBe('regressed');
    expect(card.latest_pass_rate).toEqual({ rate: 0.6, passed: 12, n: 20, lower: wilson(12, 20).lower, upper: wilson(12, 20).upper, level: 0.95 });
    expect(card.overall_pass_rate).toMatchObject({ passed: 62, n: 80, rate: 62 / 80, lower: wilson(62, 80).lower, upper: wilson(62, 80).upper });
    expect(card.mean_score).toBeCloseTo((0.9 + 0.85 + 0.75 + 0.6) / 4, 12);
  });

  it('trend: the least-squares slope of pass rate per run over the window, with its direction', () => {
    // Pass rates 0.90, 0.85, 0.75, 0.60 at x = 0..3: slope = -0.1 per run.
    expect(card.trend.slope_per_run).toBeCloseTo(-0.1, 12);
    expect(card.trend).toMatchObject({ direction: 'declining', runs: 4, first_run_id: 'r0', last_run_id: 'r3' });
    const windowed = buildScorecard(runs, 2)!;
    expect(windowed.trend).toMatchObject({ runs: 2, first_run_id: 'r2', last_run_id: 'r3' });
    expect(windowed.trend.slope_per_run).toBeCloseTo(-0.15, 12);
    expect(buildScorecard([run(0, 10)])!.trend.direction).toBe('insufficient_data');
    expect(buildScorecard([])).toBeNull();
  });

  it('exports CSV with the stable columns, field by field', () => {
    const csv = scorecardsToCsv([card]);
    const [header, row, end] = csv.split('\r\n');
    expect(header.split(',')).toEqual([...SCORECARD_CSV_COLUMNS]);
    expect(end).toBe('');
    const fields = Object.fromEntries(header.split(',').map((h, i) => [h, row.split(',')[i]]));
    expect(fields).toEqual({
      suite_key: 'support',
      subject_kind: 'agent',
      subject_id: 'bot',
      runs: '4',
      latest_run_id: 'r3',
      latest_completed_at: '2026-11-30T03:00:00.000Z',
      latest_suite_version: '2',
      latest_pass_rate: '0.600000',
      latest_passed: '12',
      latest_n: '20',
      latest_ci_lower: wilson(12, 20).lower.toFixed(6),
      latest_ci_upper: wilson(12, 20).upper.toFixed(6),
      overall_pass_rate: (62 / 80).toFixed(6),
      overall_passed: '62',
      overall_n: '80',
      overall_ci_lower: wilson(62, 80).lower.toFixed(6),
      overall_ci_upper: wilson(62, 80).upper.toFixed(6),
      mean_score: card.mean_score.toFixed(6),
      trend_slope_per_run: (-0.1).toFixed(6),
      trend_direction: 'declining',
      trend_runs: '4',
      latest_verdict: 'regressed',
      latest_completeness: 'complete',
      runs_incomplete: '0',
      latest_cases_needed: '',
      latest_judge_corrected_scope: '',
      latest_judge_corrected_rate: '',
      latest_judge_corrected_ci_lower: '',
      latest_judge_corrected_ci_upper: '',
      latest_judge_passed: '',
      latest_judge_n: '',
      latest_judge_sensitivity_x: '',
      latest_judge_sensitivity_n: '',
      latest_judge_specificity_x: '',
      latest_judge_specificity_n: '',
    });
  });

  it('J4/J9: the latest run\'s judge-corrected pass rate, with its interval and denominators, in JSON and CSV', () => {
    const rate = (x: number, n: number) => ({ value: x / n, numerator: x, denominator: n, lower: 0, upper: 1 });
    // Example 4 (first test) of Lang & Reiczigel (2014): 259 of 509, Se 84/127, Sp 96/109 -> 0.58 to 0.87.
    const corrected = correctedJudgePassRate({ passed: 259, n: 509 }, { sensitivity: rate(84, 127), specificity: rate(96, 109) });
    const withJudge = buildScorecard(runs, 10, [{ scope: 'suite:support', ...corrected }])!;
    expect(withJudge.latest_judge_corrected_pass_rates).toEqual([{ scope: 'suite:support', ...corrected }]);
    expect(card.latest_judge_corrected_pass_rates).toEqual([]);
    const [header, row] = scorecardsToCsv([withJudge]).split('\r\n');
    const fields = Object.fromEntries(header!.split(',').map((h, i) => [h, row!.split(',')[i]]));
    expect(fields).toMatchObject({
      latest_judge_corrected_scope: 'suite:support',
      latest_judge_corrected_rate: corrected.rate!.toFixed(6),
      latest_judge_corrected_ci_lower: corrected.lower.toFixed(6),
      latest_judge_corrected_ci_upper: corrected.upper.toFixed(6),
      latest_judge_passed: '259',
      latest_judge_n: '509',
      latest_judge_sensitivity_x: '84',
      latest_judge_sensitivity_n: '127',
      latest_judge_specificity_x: '96',
      latest_judge_specificity_n: '109',
    });
    expect([Number(fields['latest_judge_corrected_ci_lower']).toFixed(2), Number(fields['latest_judge_corrected_ci_upper']).toFixed(2)]).toEqual(['0.58', '0.87']);
  });

  it('quotes a field with a comma or a quote (RFC 4180)', () => {
    const csv = scorecardsToCsv([{ ...card, subject_id: 'a,"b"' }]);
    expect(csv.split('\r\n')[1]).toContain('"a,""b"""');
  });
});
