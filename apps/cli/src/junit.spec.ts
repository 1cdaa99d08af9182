import { XMLParser, XMLValidator } from 'fast-xml-parser';
import * as path from 'node:path';
import { gateAnswer, repoRoot, runView, REGRESSED_COMPARISON } from './cli.testing';
import { attr, caseOutcome, renderJunit, text } from './junit';
import { compareLocal, loadOutputs, loadSuite, scoreLocally } from './local-evaluation';
import { fromGate, fromLocal, fromRunView } from './report';

/** Parses with a real XML parser and returns the document: structure is checked, never grepped. */
function parse(xml: string): any {
  expect(XMLValidator.validate(xml)).toBe(true);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    isArray: (name, _jpath, _leaf, isAttribute) => !isAttribute && ['testsuite', 'testcase', 'property', 'failure', 'error', 'skipped'].includes(name),
  });
  return parser.parse(xml);
}

function props(suite: any): Record<string, string> {
  return Object.fromEntries(suite.properties.property.map((p: any) => [p.name, p.value]));
}

describe('unit: JUnit XML (X5)', () => {
  it('maps a gate answer: one testcase per case, failures and errors counted, properties with run id and verdict', () => {
    const xml = renderJunit(fromGate(gateAnswer(), 2.5));
    const doc = parse(xml);
    const root = doc.testsuites;
    expect(root).toMatchObject({ tests: '3', failures: '1', errors: '1', skipped: '0', time: '2.500' });
    expect(root.testsuite).toHaveLength(1);
    const suite = root.testsuite[0];
    expect(suite).toMatchObject({ name: 'support-triage', tests: '3', failures: '1', errors: '1', skipped: '0', time: '2.500', timestamp: '2026-11-30T10:00:00' });
    expect(props(suite)).toMatchObject({
      run_id: 'ci-4711',
      verdict: 'fail',
      recorded_verdict: 'fail',
      gate_id: '8f1c2a4e-0b1d-4c55-9a8e-3f0e6f1d2c3b',
      suite_version: '3',
      pass_rate: '84.0% (42/50, 95% CI 71.5-91.7%)',
      regression_verdict: 'regressed',
      baseline_run_id: 'ci-4700',
    });
    expect(props(suite).comparison).toContain('pass-rate difference -12.0 pp (95% CI -25.0 to -1.0 pp), Newcombe hybrid score');
    expect(props(suite).paired_diff).toBeUndefined();
    expect(props(suite)['reason.1']).toMatch(/^regressed: /);
    expect(props(suite)['warning.1']).toMatch(/^judge_credential_missing: /);
    const cases = suite.testcase;
    expect(cases.map((c: any) => [c.classname, c.name])).toEqual([
      ['support-triage', 'route-double-charge'],
      ['support-triage', 'route-refund-status'],
      ['support-triage', 'reply-tone'],
    ]);
    expect(cases[0].failure).toBeUndefined();
    expect(cases[0].error).toBeUndefined();
    expect(cases[1].failure).toHaveLength(1);
    expect(cases[1].failure[0].message).toBe('mismatch');
    expect(cases[2].error[0].message).toBe('judge_credential_missing');
    expect(suite['system-out']).toContain('verdict: fail');
  });

  it('carries the paired interval that decided and an inconclusive drop\'s cases needed (G7, G8)', () => {
    const comparison = {
      verdict: 'inconclusive_noise',
      baseline_run_id: 'ci-4700',
      score_drop: 0.05,
      regression_threshold: 0.01,
      pass_rate_diff: { diff: -0.05, lower: -0.26, upper: 0.17, level: 0.95, method: 'newcombe_hybrid_score' },
      run: { passed: 18, n: 40 },
      baseline: { passed: 20, n: 40 },
      decided_by: 'paired',
      paired_diff: { diff: -0.05, lower: -0.16, upper: 0.04, level: 0.95, method: 'newcombe_paired_10', baseline_only: 3, run_only: 1, n: 40 },
      cases_needed: { per_run: 620, have: 40, method: 'mcnemar_connor', alpha: 0.05, power: 0.8 },
    };
    const suite = parse(renderJunit(fromGate(gateAnswer({ comparison }), 1))).testsuites.testsuite[0];
    expect(props(suite)).toMatchObject({ paired_diff: '-0.05 [-0.16, 0.04] baseline_only=3 run_only=1 n=40', cases_needed_per_run: '620' });
    expect(props(suite).comparison).toContain('Newcombe paired method 10 - this decided');
  });

  it('classifies outcomes: scorer failures, machinery errors, unscored cases', () => {
    expect(caseOutcome({ case_id: 'a', passed: true, score: 1, label: 'match' })).toBe('passed');
    for (const label of ['mismatch', 'missing_output', 'judge_fail', 'judge_below_min_score', 'invalid_json']) {
      expect(caseOutcome({ case_id: 'a', passed: false, score: 0, label })).toBe('failure');
    }
    for (const label of ['scorer_error', 'judge_unparseable', 'judge_timeout', 'judge_not_configured', 'judge_credential_missing']) {
      expect(caseOutcome({ case_id: 'a', passed: false, score: 0, label })).toBe('error');
    }
    expect(caseOutcome({ case_id: 'a', passed: null, score: null, label: 'not_scored' })).toBe('skipped');
    const doc = parse(renderJunit(fromGate(gateAnswer({ cases: [{ case_id: 'x', label: 'not_scored' }] }))));
    expect(doc.testsuites.testsuite[0]).toMatchObject({ tests: '1', skipped: '1', failures: '0' });
    expect(doc.testsuites.testsuite[0].testcase[0].skipped[0].message).toBe('not_scored');
  });

  it('escapes markup, quotes and strips characters XML cannot carry; the parser gets the text back', () => {
    const nasty = `a<b>&"c'\u0001\u001f\uFFFE\uD800`;
    const answer = gateAnswer({
      // A code whose message the CLI shows as the service wrote it (budget_blocked), so the escaping is what is tested.
      reasons: [{ code: 'budget_blocked', message: 'drop <0.12> & "more" \'here\'\nsecond line' }],
      cases: [{ case_id: 'id-1', passed: false, score: 0, label: nasty }],
    });
    const xml = renderJunit(fromGate(answer));
    const doc = parse(xml);
    const failure = doc.testsuites.testsuite[0].testcase[0].failure[0];
    expect(failure.message).toBe(`a<b>&"c'`);
    expect(props(doc.testsuites.testsuite[0])['reason.1']).toContain('drop <0.12> & "more" \'here\'&#10;second line');
    expect(text('<&>')).toBe('&lt;&amp;&gt;');
    expect(attr('"\'\n\t')).toBe('&quot;&apos;&#10;&#9;');
  });

  it('never includes a candidate output, even when an answer carries one', () => {
    const answer = gateAnswer({ cases: [{ case_id: 'c1', passed: false, score: 0, label: 'mismatch', output: 'CANARY-OUTPUT-7731' }] });
    expect(renderJunit(fromGate(answer))).not.toContain('CANARY-OUTPUT-7731');
  });

  it('maps a run with its cases from the read model, and a failing verdict without cases keeps CI red', () => {
    const view = runView({ n: 3, passed: 1, verdict: 'regressed', comparison: REGRESSED_COMPARISON });
    const cases = [
      { case_id: 'c1', scorer: 'exact', passed: true, score: 1, label: 'match' },
      { case_id: 'c2', scorer: 'exact', passed: false, score: 0, label: 'mismatch' },
      { case_id: 'c3', scorer: 'exact', passed: false, score: 0, label: 'missing_output' },
    ];
    const doc = parse(renderJunit(fromRunView(view, cases, 1)));
    const suite = doc.testsuites.testsuite[0];
    expect(suite).toMatchObject({ tests: '3', failures: '2', errors: '0' });
    expect(props(suite)).toMatchObject({ run_id: 'ci-1', verdict: 'fail', kind: 'run' });
    expect(suite.testcase[2].failure[0].message).toBe('missing_output');

    const empty = parse(renderJunit(fromGate(gateAnswer({ cases: [] }))));
    expect(empty.testsuites.testsuite[0].testcase).toHaveLength(1);
    expect(empty.testsuites.testsuite[0].testcase[0].failure[0].message).toBe('regressed');
  });

  it('maps a local run of the example suite case by case', () => {
    const { suite, scorers } = loadSuite(path.join(repoRoot, 'examples/support-triage.suite.yaml'));
    const run = scoreLocally('candidate', suite, scorers, loadOutputs(path.join(repoRoot, 'examples/support-triage.regressed.outputs.jsonl')));
    const base = scoreLocally('baseline', suite, scorers, loadOutputs(path.join(repoRoot, 'examples/support-triage.good.outputs.jsonl')));
    const doc = parse(renderJunit(fromLocal(suite.key, suite.pass_threshold, run, compareLocal(run, base, suite.regression_threshold))));
    const s = doc.testsuites.testsuite[0];
    expect(Number(s.tests)).toBe(suite.cases.length);
    expect(Number(s.failures) + Number(s.errors)).toBe(run.n - run.passed);
    expect(s.testcase.map((c: any) => c.name)).toEqual(suite.cases.map((c) => c.id));
  });
});
