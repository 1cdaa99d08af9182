import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseJunit, runEvals } from '../../apps/cli/src/e2e.testing';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';

/**
 * GT7 end to end: one gate over three suites, on the embedded `evals serve` (PGlite, in-process bus), through
 * the real CLI. Exact-match scorers make every number deterministic. Each suite's baseline passes every case;
 * the candidate fails 4 of 19 cases of suite A, 1 of 10 of B and 1 of 10 of C. The runs score the same cases
 * of one suite version, so the paired interval decides (G7). A's raw p-value is just under 0.05 - on its own
 * it is a regression - but Holm over the three tests adjusts it to 3 x 0.0494 = 0.148: the family passes,
 * and the report shows both values.
 *
 * The expected p-values are computed here, independently of libs/stats: Newcombe's paired method 10 written
 * out again, its crossing z* found by the secant method, and the normal tail by Simpson's rule on the density.
 */

/** Wilson score bounds of x/n at critical value z. */
function wilsonAt(x: number, n: number, z: number): [number, number] {
  const p = x / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [x === 0 ? 0 : centre - half, x === n ? 1 : centre + half];
}

/** Upper limit of run - baseline by Newcombe (1998) method 10 for a paired table, the run first. */
function pairedUpper(both: number, runOnly: number, baselineOnly: number, neither: number, z: number): number {
  const n = both + runOnly + baselineOnly + neither;
  const [x1, x2] = [both + runOnly, both + baselineOnly];
  const [, u1] = wilsonAt(x1, n, z);
  const [l2] = wilsonAt(x2, n, z);
  const margins = x1 * (n - x1) * x2 * (n - x2);
  const cross = both * neither - runOnly * baselineOnly;
  const phi = margins === 0 ? 0 : (cross > 0 ? Math.max(cross - n / 2, 0) : cross) / Math.sqrt(margins);
  const [dx, dy] = [u1 - x1 / n, x2 / n - l2];
  return x1 / n - x2 / n + Math.sqrt(dx * dx + dy * dy - 2 * phi * dx * dy);
}

/** 1 - Phi(z) by composite Simpson's rule on the standard normal density from z to z + 12. */
function upperTail(z: number): number {
  const steps = 20000;
  const h = 12 / steps;
  const f = (t: number) => Math.exp((-t * t) / 2) / Math.sqrt(2 * Math.PI);
  let sum = f(z) + f(z + 12);
  for (let i = 1; i < steps; i++) sum += (i % 2 === 1 ? 4 : 2) * f(z + i * h);
  return (sum * h) / 3;
}

/** The two-sided p-value of a drop: z* where the upper limit reaches 0 (secant method), p = 2 (1 - Phi(z*)). */
function expectedP(both: number, baselineOnly: number): number {
  const g = (z: number) => pairedUpper(both, 0, baselineOnly, 0, z);
  let [a, b] = [1, 3];
  for (let i = 0; i < 100 && Math.abs(b - a) > 1e-14 && g(b) !== g(a); i++) [a, b] = [b, b - (g(b) * (b - a)) / (g(b) - g(a))];
  return 2 * upperTail(b);
}

describe('e2e: a gate over several suites (GT7, Holm), embedded', () => {
  let server: EmbeddedServe | undefined;
  let dir: string;
  let env: Record<string, string>;
  const sizes = { 'fam-a': 19, 'fam-b': 10, 'fam-c': 10 } as const;
  const keys = Object.keys(sizes) as Array<keyof typeof sizes>;

  const outputs = (name: string, n: number, failing: number): string => {
    const file = path.join(dir, `${name}.jsonl`);
    fs.writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify({ case_id: `c${i}`, output: i < failing ? 'no' : 'yes' })).join('\n') + '\n');
    return file;
  };
  const pairs = (tag: string, failing: Record<string, number>) => keys.flatMap((k) => ['--suite', k, '--outputs', outputs(`${tag}-${k}`, sizes[k], failing[k] ?? 0)]);
  const api = async (method: string, route: string, body?: unknown) => {
    const r = await fetch(`${server!.url}${route}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: r.status, body: (await r.json()) as any };
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-gate-family-'));
    server = await startEmbeddedServe({ dataDir: path.join(dir, 'data') });
    env = { EVALS_SERVER: server.url, EVALS_NO_PROGRESS: '1' };
    for (const k of keys) {
      const cases = Array.from({ length: sizes[k] }, (_, i) => [`  - id: c${i}`, `    input: "q${i}"`, '    expected: "yes"'].join('\n'));
      fs.writeFileSync(path.join(dir, `${k}.yaml`), [`key: ${k}`, 'default_scorer: {type: exact}', 'pass_threshold: 0.5', 'regression_threshold: 0.05', 'cases:', ...cases, ''].join('\n'));
      expect((await runEvals(['suite', 'push', path.join(dir, `${k}.yaml`)], env)).code).toBe(0);
    }
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the independent p-values: A just under 0.05 on its own, not after Holm over three', () => {
    const [pa, pb] = [expectedP(15, 4), expectedP(9, 1)];
    // scipy (brentq + norm.sf) on the same table gives 0.04939699596663098 and 0.3483820928742217.
    expect(pa).toBeCloseTo(0.04939699596663098, 9);
    expect(pb).toBeCloseTo(0.3483820928742217, 9);
    expect(pa).toBeLessThan(0.05);
    expect(3 * pa).toBeGreaterThan(0.05);
  });

  it('refuses a malformed family with a code naming the field', async () => {
    const one = await api('POST', '/v1/gate', { subject_kind: 'agent', subject_id: 'bot', suites: [{ suite_key: 'fam-a', outputs: [] }] });
    expect([one.status, one.body.code, one.body.field]).toEqual([400, 'INVALID_REQUEST', 'suites']);
    const twice = await api('POST', '/v1/gate', { subject_kind: 'agent', subject_id: 'bot', suites: [{ suite_key: 'fam-a', outputs: [] }, { suite_key: 'fam-a', outputs: [] }] });
    expect([twice.status, twice.body.code, twice.body.field]).toEqual([422, 'DUPLICATE_SUITE', 'suites[1].suite_key']);
    const unknown = await api('POST', '/v1/gate', { subject_kind: 'agent', subject_id: 'bot', suites: [{ suite_key: 'fam-a', outputs: [] }, { suite_key: 'fam-b', outputs: [{ case_id: 'zz', output: 'yes' }] }] });
    expect([unknown.status, unknown.body.code, unknown.body.field]).toEqual([422, 'UNKNOWN_CASE', 'suites[1].outputs[0].case_id']);
  }, 60_000);

  it('the family follows the Holm-adjusted p-values: A regressed on its own, not in the family; the report shows raw and adjusted', async () => {
    const baseline = await runEvals(['gate', '--subject-id', 'bot', ...pairs('base', {}), '--json'], env);
    expect(baseline.stderr).toBe('');
    expect(baseline.code).toBe(0);
    const base = JSON.parse(baseline.stdout);
    expect(base.family).toEqual({ method: 'holm', tests: 0, alpha: 0.05 });
    const baseRunA = base.suites[0].run.run_id as string;

    const [pa, pb] = [expectedP(15, 4), expectedP(9, 1)];
    const junit = path.join(dir, 'family.xml');
    const summary = path.join(dir, 'family.md');
    const r = await runEvals(['gate', '--subject-id', 'bot', ...pairs('cand', { 'fam-a': 4, 'fam-b': 1, 'fam-c': 1 }), '--junit', junit, '--summary', summary], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const familyId = /^gate ([0-9a-f-]{36}): PASS \(family of 3 suites\)/.exec(r.stdout)![1]!;
    expect(r.stdout).toContain('Holm over 3 regression test(s), family-wise alpha 0.05');
    expect(r.stdout).toContain('== suite fam-a (its own gate: fail; in the family: pass)');
    expect(r.stdout).toContain(`regression p: raw p ${pa.toFixed(4)}, Holm-adjusted p ${(3 * pa).toFixed(4)}`);
    expect(r.stdout).toContain(`regression p: raw p ${pb.toFixed(4)}, Holm-adjusted p ${(2 * pb).toFixed(4)}`);
    expect(r.stdout).toContain('not significant after Holm over 3 suites');
    expect(r.stdout.trimEnd().split('\n').pop()).toBe('verdict: PASS');

    // The recorded family gate, by its id: raw and adjusted p-values, each suite's own gate and comparison.
    const status = await runEvals(['gate', 'status', familyId, '--json'], env);
    expect(status.code).toBe(0);
    const g = JSON.parse(status.stdout);
    expect(g).toMatchObject({ gate_id: familyId, kind: 'family', recorded_verdict: 'pass', effective_verdict: 'pass', family: { method: 'holm', tests: 3, alpha: 0.05 } });
    const [a, b, c] = g.suites;
    expect(a).toMatchObject({ suite_key: 'fam-a', verdict: 'pass', suite_verdict: 'fail', comparison: { verdict: 'regressed', decided_by: 'paired', paired_diff: { baseline_only: 4, run_only: 0, n: 19 } } });
    expect(a.regression_p.raw).toBeCloseTo(pa, 9);
    expect(a.regression_p.adjusted).toBeCloseTo(3 * pa, 9);
    expect(b.regression_p.raw).toBeCloseTo(pb, 9);
    expect(b.regression_p.adjusted).toBeCloseTo(2 * pb, 9);
    expect(c.regression_p).toEqual(b.regression_p);
    expect(a.warnings[0]).toMatchObject({ code: 'inconclusive_noise' });
    // A's own gate, recorded as on its own: it failed for the regression.
    const own = await api('GET', `/v1/gate/${a.gate_id}`);
    expect(own.body).toMatchObject({ recorded_verdict: 'fail', reasons: [{ code: 'regressed' }] });

    const suite = parseJunit(junit).testsuites.testsuite[0];
    expect(suite).toMatchObject({ name: 'evals gate family', tests: '3', failures: '0' });
    expect(suite.testcase.map((t: any) => t.name)).toEqual(keys);
    const props = Object.fromEntries(suite.properties.property.map((p: any) => [p.name, p.value]));
    expect(props).toMatchObject({ gate_id: familyId, verdict: 'pass', 'family.tests': '3', 'suite.fam-a.raw_p': pa.toFixed(4), 'suite.fam-a.adjusted_p': (3 * pa).toFixed(4) });
    const md = fs.readFileSync(summary, 'utf8');
    expect(md).toMatch(/^## evals gate: PASS \(3 suites, Holm\)/);
    expect(md).toContain(`| \`fam-a\` | PASS (own gate: fail) | 78.9% (15/19`);
    expect(md).toContain(`| REGRESSED | ${pa.toFixed(4)} | ${(3 * pa).toFixed(4)} |`);

    // The same candidate of A alone, against the same baseline: Holm over one test is the test itself - it fails.
    const alone = await runEvals(['gate', '--suite', 'fam-a', '--subject-id', 'bot', '--outputs', path.join(dir, 'cand-fam-a.jsonl'), '--baseline', baseRunA, '--json'], env);
    expect(alone.code).toBe(1);
    expect(JSON.parse(alone.stdout).reasons.map((x: any) => x.code)).toEqual(['regressed']);
  }, 180_000);

  it('a family that fails can be overridden: the family gate\'s effective verdict changes, its suites\' gates do not', async () => {
    const r = await runEvals(['gate', '--subject-id', 'low', ...pairs('low', { 'fam-a': 15, 'fam-b': 0, 'fam-c': 0 }), '--json'], env);
    expect(r.code).toBe(1);
    const g = JSON.parse(r.stdout);
    expect(g.reasons).toEqual([expect.objectContaining({ code: 'below_pass_threshold', suite_key: 'fam-a' })]);
    const o = await runEvals(['override', g.gate_id, '--reason', 'known outage of the upstream model, approved by the lead'], env);
    expect(o.code).toBe(0);
    expect((await runEvals(['gate', 'status', g.gate_id], env)).code).toBe(0);
    expect((await runEvals(['gate', 'status', g.suites[0].gate_id], env)).code).toBe(1);
  }, 120_000);
});
