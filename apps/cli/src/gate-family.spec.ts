import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { cli, fakeFetch, gateAnswer } from './cli.testing';
import { renderJunit } from './junit';
import { renderMarkdown } from './markdown';
import { fromGate, renderReport } from './report';
import { styles } from './format';

/** A family answer of `POST /v1/gate` (docs/gate.md, GT7): suite a regressed on its own, not after Holm over 3. */
function familyAnswer(o: Record<string, unknown> = {}): Record<string, unknown> {
  const suite = (key: string, gateId: string, verdict: string, own: string, p: { raw: number; adjusted: number } | null, extra: Record<string, unknown> = {}) => {
    const g = gateAnswer({ gate_id: gateId, recorded_verdict: own, effective_verdict: own });
    return {
      suite_key: key,
      gate_id: gateId,
      verdict,
      suite_verdict: own,
      reasons: [],
      warnings: [{ code: 'inconclusive_noise', message: 'not significant after Holm over 3 suites' }],
      regression_p: p,
      comparison: g['comparison'],
      run: { ...(g['run'] as object), suite_key: key },
      judge: { used: false },
      budget: { decision: 'not_needed' },
      sample: null,
      cases: g['cases'],
      ...extra,
    };
  };
  return {
    gate_id: '11111111-2222-4333-8444-555555555555',
    kind: 'family',
    recorded_verdict: 'pass',
    effective_verdict: 'pass',
    family: { method: 'holm', tests: 3, alpha: 0.05 },
    reasons: [],
    warnings: [{ code: 'inconclusive_noise', suite_key: 'a', message: 'suite a: not significant after Holm over 3 suites' }],
    subject: { kind: 'agent', id: 'bot', variant: null },
    suites: [
      suite('a', 'aaaaaaaa-0000-4000-8000-000000000001', 'pass', 'fail', { raw: 0.049397, adjusted: 0.148191 }),
      suite('b', 'aaaaaaaa-0000-4000-8000-000000000002', 'pass', 'pass', { raw: 0.350159, adjusted: 0.700317 }),
      suite('c', 'aaaaaaaa-0000-4000-8000-000000000003', 'pass', 'pass', null, { comparison: null }),
    ],
    override: null,
    recorded_at: '2026-12-01T10:00:00.000Z',
    ...o,
  };
}

describe('unit: evals gate over several suites (GT7)', () => {
  const outputs = 'examples/support-triage.good.outputs.jsonl';

  it('sends the pairs in order as one family request and exits by the family verdict', async () => {
    let answer = familyAnswer();
    const { fetch, calls } = fakeFetch((r) => (r.method === 'POST' && r.url === 'http://evals.test:3001/v1/gate' ? { status: 200, json: answer } : undefined));
    const args = ['gate', '--subject-id', 'bot', '--suite', 'a', '--outputs', outputs, '--suite', 'b', '--outputs', outputs, '--suite', 'c', '--outputs', outputs, '--sample-size', '5', '--seed', 's'];
    const r = await cli(args, { fetch });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const body = JSON.parse(calls[0]!.body!);
    expect(Object.keys(body).sort()).toEqual(['subject_id', 'subject_kind', 'suites']);
    expect(body.suites.map((s: any) => [s.suite_key, s.outputs.length > 0, s.sample])).toEqual([
      ['a', true, { size: 5, seed: 's' }],
      ['b', true, { size: 5, seed: 's' }],
      ['c', true, { size: 5, seed: 's' }],
    ]);
    expect(r.out).toMatch(/^gate 11111111-2222-4333-8444-555555555555: PASS \(family of 3 suites\)/);
    expect(r.out).toContain('== suite a (its own gate: fail; in the family: pass)');
    expect(r.out).toContain('regression p: raw p 0.0494, Holm-adjusted p 0.1482');
    expect(r.out).toContain('regression p: no regression test');
    expect(r.out.trimEnd().split('\n').pop()).toBe('verdict: PASS');
    answer = familyAnswer({ recorded_verdict: 'fail', effective_verdict: 'fail' });
    expect((await cli(args, { fetch })).code).toBe(1);
  });

  it.each([
    [['--suite', 'a', '--outputs', 'x.jsonl', '--suite', 'b'], /give one --outputs FILE.jsonl after each --suite KEY \(got 2 --suite and 1 --outputs\)/],
    [['--suite', 'a', '--outputs', 'x.jsonl', '--suite', 'b', '--outputs', 'y.jsonl', '--baseline', 'r1'], /--baseline names one suite's run/],
    [['--suite', 'a', '--outputs', 'x.jsonl', '--suite', 'b', '--outputs', 'y.jsonl', '--run-id', 'r1'], /--run-id names one suite's run/],
    [['--suite', 'a', '--outputs', 'x.jsonl', '--outputs', 'y.jsonl'], /one --outputs per --suite/],
  ])('usage errors exit 2: %j', async (extra, message) => {
    const r = await cli(['gate', '--subject-id', 'bot', ...extra]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('JUnit: one testcase per suite, failed by its family verdict, raw and adjusted p as properties', () => {
    const report = fromGate(familyAnswer({ recorded_verdict: 'fail', effective_verdict: 'fail', suites: (familyAnswer()['suites'] as any[]).map((s, i) => (i === 1 ? { ...s, verdict: 'fail', reasons: [{ code: 'below_pass_threshold', message: 'low' }] } : s)) }));
    const xml = renderJunit(report);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (n) => ['testsuite', 'testcase', 'property', 'failure'].includes(n) }).parse(xml);
    const suite = doc.testsuites.testsuite[0];
    expect(suite).toMatchObject({ name: 'evals gate family', tests: '3', failures: '1' });
    expect(suite.testcase.map((c: any) => [c.name, c.failure ? c.failure[0].message : null])).toEqual([
      ['a', null],
      ['b', 'below_pass_threshold'],
      ['c', null],
    ]);
    const props = Object.fromEntries(suite.properties.property.map((p: any) => [p.name, p.value]));
    expect(props).toMatchObject({ kind: 'gate_family', verdict: 'fail', 'family.method': 'holm', 'family.tests': '3', 'suite.a.raw_p': '0.0494', 'suite.a.adjusted_p': '0.1482', 'suite.b.adjusted_p': '0.7003' });
    expect(props['suite.c.raw_p']).toBeUndefined();
    expect(suite.testcase[0]['system-out']).toContain('regression p: raw p 0.0494, Holm-adjusted p 0.1482');
  });

  it('Markdown: the family table with raw and Holm-adjusted p-values', () => {
    const md = renderMarkdown(fromGate(familyAnswer()));
    expect(md).toMatch(/^## evals gate: PASS \(3 suites, Holm\)/);
    expect(md).toContain('| suite | verdict | pass rate (95% CI) | regression | raw p | Holm-adjusted p | suite gate |');
    expect(md).toMatch(/\| `a` \| PASS \(own gate: fail\) \| 84\.0% \(42\/50, 95% CI 71\.5-91\.7%\) \| REGRESSED \| 0\.0494 \| 0\.1482 \| `aaaaaaaa-0000-4000-8000-000000000001` \|/);
    expect(md).toMatch(/\| `c` \| PASS \| .* \| no baseline \| - \| - \|/);
  });

  it('one suite keeps the single-suite rendering (no family section)', () => {
    const text = renderReport(fromGate(gateAnswer()), styles({}, false));
    expect(text).not.toContain('family');
    expect(text).toMatch(/^gate 8f1c2a4e-0b1d-4c55-9a8e-3f0e6f1d2c3b: FAIL\n/);
  });
});
