import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newcombeDiff } from '@evals/stats';
import { parseSuiteYaml } from './suite.parser';

/**
 * The example suites in examples/ are documentation that runs: they must parse and validate, their
 * "good" outputs must pass every deterministic case, and their "regressed" outputs must be a regression
 * by the suite's own rule (G2: score drop above regression_threshold, interval excluding zero).
 */
const EXAMPLES = join(__dirname, '..', '..', '..', '..', 'examples');

function load(name: string) {
  const file = `${name}.suite.yaml`;
  const result = parseSuiteYaml(readFileSync(join(EXAMPLES, file), 'utf8'), file);
  if (!result.ok) throw new Error(JSON.stringify(result.errors, null, 2));
  return result;
}

function outputs(name: string, kind: 'good' | 'regressed'): Map<string, string> {
  const lines = readFileSync(join(EXAMPLES, `${name}.${kind}.outputs.jsonl`), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const map = new Map<string, string>();
  for (const line of lines) {
    const { case_id, output } = JSON.parse(line) as { case_id: string; output: string };
    expect(map.has(case_id)).toBe(false);
    map.set(case_id, output);
  }
  return map;
}

function scoreDeterministic(name: string, kind: 'good' | 'regressed'): { passed: number; n: number; score: number } {
  const { suite, scorers } = load(name);
  const out = outputs(name, kind);
  let passed = 0;
  let n = 0;
  suite.cases.forEach((c, i) => {
    const scorer = scorers[i];
    if (scorer === undefined || scorer.kind !== 'deterministic') return;
    const output = out.get(c.id);
    if (output === undefined) throw new Error(`no output for ${c.id}`);
    n += 1;
    if (scorer.score(output).passed) passed += 1;
  });
  return { passed, n, score: passed / n };
}

describe.each(['support-triage', 'extraction-json'])('example suite %s', (name) => {
  it('parses and validates, every case with a compiled scorer', () => {
    const { suite, scorers } = load(name);
    expect(suite.key).toBe(name);
    expect(scorers).toHaveLength(suite.cases.length);
    expect(suite.cases.length).toBeGreaterThanOrEqual(10);
  });

  it.each(['good', 'regressed'] as const)('%s outputs cover exactly the suite cases', (kind) => {
    const { suite } = load(name);
    expect([...outputs(name, kind).keys()].sort()).toEqual(suite.cases.map((c) => c.id).sort());
  });

  it('good outputs pass every deterministic case', () => {
    const good = scoreDeterministic(name, 'good');
    expect(good.passed).toBe(good.n);
  });

  it('regressed outputs are a regression by the suite rule (G1, G2)', () => {
    const { suite } = load(name);
    const good = scoreDeterministic(name, 'good');
    const bad = scoreDeterministic(name, 'regressed');
    expect(good.score - bad.score).toBeGreaterThan(suite.regression_threshold);
    const diff = newcombeDiff(bad.passed, bad.n, good.passed, good.n);
    expect(diff.excludesZero).toBe(true);
    expect(bad.passed / bad.n).toBeLessThan(suite.pass_threshold);
  });
});

describe('example suite reply-tone (the judge path: README, `evals label`, `evals calibrate`)', () => {
  it('parses and validates, and its cases are judged by llm_judge', () => {
    const { suite, scorers } = load('reply-tone');
    expect(suite.key).toBe('reply-tone');
    expect(scorers).toHaveLength(suite.cases.length);
    expect(scorers.length).toBeGreaterThan(0);
    expect(scorers.every((s) => s.kind === 'judge')).toBe(true);
  });

  it("the demo's suite has no judge case: its gate fails for the regression alone", () => {
    expect(load('support-triage').scorers.some((s) => s.kind === 'judge')).toBe(false);
  });
});
