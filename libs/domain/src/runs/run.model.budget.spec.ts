import { decodeRunEvent } from './run-event.codec';
import type { RunOpenedV1 } from './run-events';
import { BUDGET_THROTTLED, foldRun, judgeSkipLabelFor, judgeStability } from './run.model';

const opened: RunOpenedV1 = {
  run_id: 'r1',
  suite_key: 's',
  suite_version: 1,
  suite_content_hash: 'h',
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 3,
  scorer_versions: { llm_judge: '1.0.0' },
};

describe('unit: the run model on throttled judge spend and verdict stability (GT4, issue 13)', () => {
  it('a throttled run judges only its listed cases; the others are budget_throttled; judge_skip still covers every case', () => {
    const throttled = foldRun([{ event: { type: 'run.opened', version: 1, data: { ...opened, judge_throttle: { case_ids: ['a', 'b'] } } } }]);
    const label = judgeSkipLabelFor(throttled);
    expect(['a', 'b', 'c'].map(label)).toEqual([null, null, BUDGET_THROTTLED]);
    const skipped = foldRun([{ event: { type: 'run.opened', version: 1, data: { ...opened, judge_skip: 'budget_blocked', judge_throttle: { case_ids: ['a'] } } } }]);
    expect(judgeSkipLabelFor(skipped)('a')).toBe('budget_blocked');
    const plain = foldRun([{ event: { type: 'run.opened', version: 1, data: opened } }]);
    expect(judgeSkipLabelFor(plain)('c')).toBeNull();
  });

  it('stability is answered from run.scored, with the Wilson interval; none without repeats', () => {
    const scored = foldRun([
      { event: { type: 'run.opened', version: 1, data: opened } },
      { event: { type: 'run.sealed', version: 1, data: { run_id: 'r1' } } },
      { event: { type: 'run.scored', version: 1, data: { run_id: 'r1', n: 3, passed: 2, score_sum: 2, missing_case_ids: [], judge_stability: { repeats: 3, cases: 3, stable: 3, unstable_case_ids: [] } } } },
    ]);
    expect(judgeStability(scored)).toMatchObject({ rate: 1, cases: 3, unstable_case_ids: [] });
    expect(judgeStability(foldRun([{ event: { type: 'run.opened', version: 1, data: opened } }]))).toBeNull();
  });

  it('the codec validates judge_throttle and judge_stability, naming the field only', () => {
    const ok = decodeRunEvent({ type: 'run.opened', version: 1, data: { ...opened, judge_throttle: { case_ids: ['a'] } } });
    expect(ok.ok).toBe(true);
    const bad = decodeRunEvent({ type: 'run.opened', version: 1, data: { ...opened, judge_throttle: { case_ids: 'a' } } });
    expect(bad).toMatchObject({ ok: false, reason: 'data.judge_throttle.case_ids: isStringArray' });
    const overStable = decodeRunEvent({
      type: 'run.scored',
      version: 1,
      data: { run_id: 'r1', n: 3, passed: 2, score_sum: 2, missing_case_ids: [], judge_stability: { repeats: 3, cases: 3, stable: 4, unstable_case_ids: [] } },
    });
    expect(overStable).toMatchObject({ ok: false, reason: 'data.judge_stability.stable: isCountNotAboveCases' });
  });
});
