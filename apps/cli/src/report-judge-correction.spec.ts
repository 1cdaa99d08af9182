import { styles } from './format';
import { correctedEntry, printedFigures, published } from './judge-correction.testing';
import { fromGate, fromRunView, renderReport } from './report';

/**
 * J4/J9 (GT6, issue 13): the CLI shows the judge-corrected pass rate of a gate and of a run with its interval
 * and every denominator. The figures are Example 4 (first test) of Lang & Reiczigel (2014): 259 of 509 judged,
 * Se 84/127, Sp 96/109 -> 95% CI 0.58 to 0.87.
 */
describe('the CLI shows the judge-corrected pass rate (J4, J9, GT6)', () => {
  const entry = correctedEntry('suite:support');
  const plain = styles({ NO_COLOR: '1' }, false);
  const line = `judge-corrected pass rate: ${printedFigures} (suite:support; Rogan-Gladen, Lang-Reiczigel interval)`;

  it('the figures are the published ones', () => {
    expect([published.lower.toFixed(2), published.upper.toFixed(2)]).toEqual(['0.58', '0.87']);
  });

  it('in a gate report', () => {
    const gate = {
      gate_id: 'g1',
      recorded_verdict: 'pass',
      effective_verdict: 'pass',
      reasons: [],
      warnings: [],
      run: { run_id: 'r1', suite_key: 'support', n: 509, passed: 259, pass_rate_ci: { lower: 0.46, upper: 0.55, level: 0.95 } },
      judge: { used: true, status: 'certified', corrected_pass_rates: [entry] },
    };
    expect(renderReport(fromGate(gate), plain)).toContain(line);
  });

  it('in a run report; a run without a certified scope shows none', () => {
    const run = { run: { run_id: 'r1', suite_key: 'support', summary: { n: 509, passed: 259, pass_rate_ci: { lower: 0.46, upper: 0.55 } } }, regression: null };
    expect(renderReport(fromRunView({ ...run, judge_corrected_pass_rates: [entry] }), plain)).toContain(line);
    expect(renderReport(fromRunView(run), plain)).not.toContain('judge-corrected');
  });
});
