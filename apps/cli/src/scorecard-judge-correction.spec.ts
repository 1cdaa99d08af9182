import { cli, fakeFetch } from './cli.testing';
import { correctedEntry, printedFigures, published } from './judge-correction.testing';

/**
 * J4/J9 (GT6, issue 13): `evals scorecard` prints the latest run's judge-corrected pass rate with its 95%
 * interval and every denominator when the scorecard carries one. The figures are Example 4 (first test) of
 * Lang & Reiczigel (2014): 259 of 509 judged, Se 84/127, Sp 96/109 -> 95% CI 0.58 to 0.87.
 */
describe('evals scorecard shows the judge-corrected pass rate (J4, J9, GT6)', () => {
  const corrected = correctedEntry('suite:reply-tone');
  const card = (suite: string, rates: unknown[]) => ({
    suite_key: suite,
    subject_kind: 'agent',
    subject_id: 'bot',
    runs: 2,
    latest_pass_rate: { passed: 259, n: 509, lower: 0.46, upper: 0.55 },
    overall_pass_rate: { passed: 500, n: 1018, lower: 0.46, upper: 0.52 },
    mean_score: 0.5,
    trend: { direction: 'insufficient_data' },
    latest_verdict: 'pass',
    latest_judge_corrected_pass_rates: rates,
  });

  it('prints one line per certified scope with interval and denominators; a card without one prints none', async () => {
    const { fetch } = fakeFetch(() => ({ status: 200, json: { scorecards: [card('reply-tone', [corrected]), card('support-triage', [])] } }));
    const r = await cli(['scorecard'], { fetch, env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    expect([published.lower.toFixed(2), published.upper.toFixed(2)]).toEqual(['0.58', '0.87']);
    const lines = r.out.split('\n').filter((l) => l.includes('judge-corrected'));
    expect(lines).toEqual([
      `judge-corrected pass rate, reply-tone agent/bot (latest run): ${printedFigures} (suite:reply-tone; Rogan-Gladen, Lang-Reiczigel interval)`,
    ]);
  });

  it('an older server without the field: the table alone', async () => {
    const { latest_judge_corrected_pass_rates: _dropped, ...old } = card('support-triage', []);
    const { fetch } = fakeFetch(() => ({ status: 200, json: { scorecards: [old] } }));
    const r = await cli(['scorecard'], { fetch, env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    expect(r.out).toContain('support-triage');
    expect(r.out).not.toContain('judge-corrected');
  });
});
