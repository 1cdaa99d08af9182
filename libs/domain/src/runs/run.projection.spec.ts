import { wilson } from '@evals/stats';
import { toEvalResult } from './eval-result';
import type { RunEvent, RunOpenedV1 } from './run-events';
import { evolveRun, summarizeRun, type RunDoc } from './run.projection';

const opened: RunOpenedV1 = {
  run_id: 'r1',
  suite_key: 'support',
  suite_version: 2,
  suite_content_hash: 'h',
  pass_threshold: 0.8,
  regression_threshold: 0.05,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 4,
  scorer_versions: { exact: '1.0.0' },
};
const at = (s: number) => ({ occurred_at: `2026-11-30T00:00:0${s}.000Z` });
const result = (case_id: string, passed: boolean) => ({ case_id, scorer: 'exact', scorer_version: '1.0.0', score: passed ? 1 : 0, passed, label: passed ? 'match' : 'mismatch' });

function replay(events: RunEvent[]): RunDoc | null {
  return events.reduce<RunDoc | null>((doc, e, i) => evolveRun(doc, e, at(i)), null);
}

describe('projection: run aggregate (R2, R3)', () => {
  const events: RunEvent[] = [
    { type: 'run.opened', version: 1, data: opened },
    { type: 'cases.scored', version: 1, data: { run_id: 'r1', results: [result('a', true), result('b', true)] } },
    { type: 'run.sealed', version: 1, data: { run_id: 'r1' } },
    { type: 'cases.scored', version: 1, data: { run_id: 'r1', results: [result('c', true)] } },
    { type: 'run.scored', version: 1, data: { run_id: 'r1', n: 4, passed: 3, score_sum: 3, missing_case_ids: ['d'] } },
  ];

  it('counts scored cases live, then takes the sealed aggregate from run.scored', () => {
    const live = replay(events.slice(0, 4))!;
    expect(live.status).toBe('sealed');
    expect([live.scored, live.passed]).toEqual([3, 3]);
    const done = replay(events)!;
    expect(done.status).toBe('completed');
    expect([done.scored, done.passed, done.missing_outputs]).toEqual([4, 3, 1]);
  });

  it('issue 13: a run.scored with judge_stability gives the run its stability with the Wilson interval; without it, none', () => {
    const stability = { repeats: 3, cases: 6, stable: 4, unstable_case_ids: ['c2', 'c5'] };
    const done = replay([...events.slice(0, 4), { type: 'run.scored', version: 1, data: { run_id: 'r1', n: 4, passed: 3, score_sum: 3, missing_case_ids: ['d'], judge_stability: stability } }])!;
    const w = wilson(4, 6);
    expect(done.judge_stability).toEqual({ ...stability, rate: 4 / 6, lower: w.lower, upper: w.upper });
    expect(replay(events)!.judge_stability).toBeUndefined();
  });

  it('counts a cases.scored v2 (counts only) exactly as the v1 it replaces (results in full), so old logs still rebuild', () => {
    const v2: RunEvent[] = [
      events[0],
      { type: 'cases.scored', version: 2, data: { run_id: 'r1', n: 2, passed: 2, score_sum: 2 } },
      events[2],
      { type: 'cases.scored', version: 2, data: { run_id: 'r1', n: 1, passed: 1, score_sum: 1 } },
    ];
    const mixed: RunEvent[] = [events[0], events[1], events[2], v2[3]!];
    for (const run of [v2, mixed]) {
      const live = replay(run)!;
      expect([live.scored, live.passed, live.score_sum]).toEqual([3, 3, 3]);
      expect(live).toEqual(replay(events.slice(0, 4)));
    }
    const partial = evolveRun(replay([events[0]]), { type: 'cases.scored', version: 2, data: { run_id: 'r1', n: 3, passed: 1, score_sum: 1.5 } }, at(5))!;
    expect([partial.scored, partial.passed, partial.score_sum]).toEqual([3, 1, 1.5]);
  });

  it('summarizes: mean score, pass rate with 95% Wilson interval, passed against the threshold (R2)', () => {
    const s = summarizeRun(replay(events)!);
    const w = wilson(3, 4);
    expect(s).toMatchObject({ n: 4, passed: 3, score: 0.75, pass_rate: 0.75, run_passed: false });
    expect(s.pass_rate_ci).toEqual({ lower: w.lower, upper: w.upper, level: 0.95 });
  });

  it('ignores a repeated run.opened and events for an unknown run', () => {
    const doc = replay(events.slice(0, 2))!;
    expect(evolveRun(doc, events[0], at(9))).toBe(doc);
    expect(evolveRun(null, events[1], at(9))).toBeNull();
  });

  it('builds the EvalResult with every field of R3 only once the run is completed', () => {
    expect(toEvalResult(replay(events.slice(0, 4))!)).toBeNull();
    const r = toEvalResult(replay(events)!)!;
    expect(Object.keys(r).sort()).toEqual(
      ['metrics', 'occurred_at', 'passed', 'run_id', 'score', 'subject_id', 'subject_kind', 'suite', 'suite_version', 'variant'].sort(),
    );
    expect(r).toMatchObject({ suite: 'support', suite_version: 2, run_id: 'r1', score: 0.75, passed: false, variant: null });
    expect(r.metrics).toMatchObject({ n: 4, passed: 3, pass_rate: 0.75, missing_outputs: 1 });
    expect(r.occurred_at).toBe(at(4).occurred_at);
  });

  it('a run exactly at its pass threshold passes (R2: >=)', () => {
    const four: RunEvent[] = [
      { type: 'run.opened', version: 1, data: { ...opened, pass_threshold: 0.75 } },
      ...events.slice(1),
    ];
    expect(toEvalResult(replay(four)!)!.passed).toBe(true);
  });
});
