import { gateAnswer, runView, REGRESSED_COMPARISON } from './cli.testing';
import { escape, renderMarkdown } from './markdown';
import { fromGate, fromRunView } from './report';

describe('unit: the Markdown summary for CI job summaries (X5, GT6)', () => {
  it('gives the verdict, reasons, warnings, rates with denominators and intervals, and the comparison', () => {
    const md = renderMarkdown(fromGate(gateAnswer()));
    const lines = md.split('\n');
    expect(lines[0]).toBe('## evals gate: FAIL');
    expect(md).toContain('**Suite** `support-triage` v3');
    expect(md).toContain('**Run** `ci-4711`');
    // the table: a header, a separator, the baseline row (Wilson from the counts) and the run row
    expect(md).toContain('| | pass rate (95% CI) | mean score | pass threshold |');
    expect(md).toMatch(/\| baseline `ci-4700` \| 96\.0% \(48\/50, 95% CI \d+\.\d-\d+\.\d%\) \| \| \|/);
    expect(md).toContain('| run | 84.0% (42/50, 95% CI 71.5-91.7%) | 0.840 | 80% |');
    expect(md).toMatch(/\*\*Reasons\*\*\n\n- `regressed`: the score dropped 0\.120 against baseline ci-4700, more than the regression threshold, and the 95% interval of the pass-rate difference excludes zero \(G2\)/);
    expect(md).toMatch(/\*\*Warnings\*\*\n\n- `judge_credential_missing`: no judge credential/);
    expect(md).toContain('**Comparison**: REGRESSED against `ci-4700` (explicit).');
    expect(md).toContain('pass-rate difference -12.0 pp (95% CI -25.0 to -1.0 pp)');
    expect(md).toContain('run 42/50 vs baseline 48/50');
    expect(md).toContain('**judge**: certified, model gpt-4o-2024-08-06');
    expect(md).toContain('**Failing cases** (2 of 3)');
    expect(md).toContain('`route-refund-status` mismatch');
  });

  it('says which cases the comparison counted when some were left out, and an ineligible baseline (G7, G4)', () => {
    const comparison = {
      ...REGRESSED_COMPARISON,
      compared_cases: { run: { n: 11, of: 12 }, baseline: { n: 11, of: 12 }, left_out: { unscored_in_run: 1, unscored_in_baseline: 0, scored_in_one_run_only: 1 } },
      baseline_eligible: false,
      baseline_ineligible_reason: 'incomplete',
    };
    const md = renderMarkdown(fromRunView(runView({ n: 50, passed: 30, verdict: 'regressed', comparison })));
    expect(md).toContain('compared on 11 of 12 cases; left out: 1 unscored in the run, 1 scored in one run only');
    expect(md).toContain('baseline not eligible as an automatic baseline (incomplete)');
    // Nothing is said when every case was counted.
    const full = renderMarkdown(fromRunView(runView({ n: 50, passed: 30, verdict: 'regressed', comparison: { ...REGRESSED_COMPARISON, compared_cases: { run: { n: 50, of: 50 }, baseline: { n: 50, of: 50 }, left_out: {} } } })));
    expect(full).not.toContain('compared on');
  });

  it('shows the paired difference that decided, and the cases an inconclusive drop would need (G7, G8)', () => {
    const comparison = {
      ...REGRESSED_COMPARISON,
      verdict: 'inconclusive_noise',
      decided_by: 'paired',
      paired_diff: { diff: -0.05, lower: -0.16, upper: 0.04, level: 0.95, method: 'newcombe_paired_10', baseline_only: 3, run_only: 1, n: 40 },
      cases_needed: { per_run: 620, have: 40, method: 'mcnemar_connor', alpha: 0.05, power: 0.8 },
    };
    const md = renderMarkdown(fromRunView(runView({ n: 40, passed: 18, verdict: 'inconclusive_noise', comparison })));
    expect(md).toContain('paired on the same 40 cases: -5.0 pp (95% CI -16.0 to +4.0 pp) (3 passed in the baseline only, 1 in the run only), Newcombe paired method 10 - this decided');
    expect(md).toContain('inconclusive: 620 cases per run would resolve a drop of this size (95% confidence, 80% power); this comparison has 40');
  });

  it('says PASS and shows an override: effective pass, recorded fail', () => {
    const md = renderMarkdown(fromGate(gateAnswer({ effective_verdict: 'pass', override: { by: 'alice', reason: 'flaky judge, see QA-812', before: 'fail', after: 'pass' } })));
    expect(md.split('\n')[0]).toBe('## evals gate: PASS');
    expect(md).toContain('Effective verdict **pass**; recorded verdict **fail** (overridden, GT5).');
    expect(md).toMatch(/\*\*override\*\*: fail -&gt; pass, by alice/);
  });

  it('summarises a run: below threshold and regressed, what changed since the baseline', () => {
    const md = renderMarkdown(fromRunView(runView({ n: 50, passed: 30, verdict: 'regressed', comparison: REGRESSED_COMPARISON })));
    expect(md.split('\n')[0]).toBe('## evals run: FAIL');
    expect(md).toContain('`below_pass_threshold`');
    expect(md).toContain('`regressed`');
    expect(md).toContain('Changed since the baseline: suite version 1 -&gt; 2.');
  });

  it('is link-free and escapes whatever the server says: no markup, no HTML, no autolinks', () => {
    const md = renderMarkdown(
      fromGate(
        gateAnswer({
          reasons: [{ code: 'judge_uncalibrated', message: 'see [here](http://evil.example/x) <img src=x> | *bold* www.example.com ops@example.com' }],
        }),
      ),
    );
    expect(md).not.toMatch(/(?<!\\)\]\(/);
    expect(md).not.toContain('http://');
    expect(md).not.toContain('<img');
    expect(md).not.toMatch(/www\.example/);
    expect(md).not.toMatch(/ops@example/);
    expect(md).toContain('\\[here\\]');
    expect(md).toContain('\\| \\*bold\\*');
    expect(escape('a\nb')).toBe('a b');
  });

  it('never includes a candidate output', () => {
    const md = renderMarkdown(fromGate(gateAnswer({ cases: [{ case_id: 'c1', passed: false, score: 0, label: 'mismatch', output: 'CANARY-OUTPUT-9931' }] })));
    expect(md).not.toContain('CANARY-OUTPUT-9931');
  });
});
