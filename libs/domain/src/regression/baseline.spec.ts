import { chooseBaseline, whatChanged, type CompletedRunRef } from './baseline';

const ref = (run_id: string, completed_at: string, over: Partial<CompletedRunRef> = {}): CompletedRunRef => ({
  run_id,
  suite_key: 'support',
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  completed_at,
  verdict: 'no_regression',
  ...over,
});

describe('unit: baseline selection (G4, G5)', () => {
  const run = ref('run', '2026-11-30T10:00:00Z', { verdict: null });

  it('automatic: the last completed run of the same suite and subject', () => {
    const d = chooseBaseline({ run, explicit: null, pinned: null, history: [ref('a', '2026-11-30T08:00:00Z'), ref('b', '2026-11-30T09:00:00Z'), ref('other', '2026-11-30T09:30:00Z', { subject_id: 'x' })] });
    expect(d).toMatchObject({ kind: 'baseline', chosen_by: 'automatic', run: { run_id: 'b' } });
  });

  it('automatic: skips runs marked inconclusive_noise (G4)', () => {
    const d = chooseBaseline({ run, explicit: null, pinned: null, history: [ref('a', '2026-11-30T08:00:00Z'), ref('noisy', '2026-11-30T09:00:00Z', { verdict: 'inconclusive_noise' })] });
    expect(d).toMatchObject({ kind: 'baseline', run: { run_id: 'a' } });
  });

  it.each<[string, Partial<CompletedRunRef>]>([
    ['regressed (the ratchet)', { verdict: 'regressed' }],
    ['incomplete: cases left unscored (the masking)', { completeness: 'incomplete' }],
    ['expired: nobody sealed it', { completeness: 'expired', verdict: 'no_baseline' }],
    ['without a verdict yet', { verdict: null }],
  ])('automatic: skips a run that is not eligible (G4, R7): %s', (_name, over) => {
    const d = chooseBaseline({ run, explicit: null, pinned: null, history: [ref('good', '2026-11-30T08:00:00Z'), ref('bad', '2026-11-30T09:00:00Z', over)] });
    expect(d).toMatchObject({ kind: 'baseline', chosen_by: 'automatic', run: { run_id: 'good' } });
  });

  it('explicit and pinned baselines stay the caller\'s choice even when not eligible (G5)', () => {
    const bad = ref('bad', '2026-11-30T09:00:00Z', { verdict: 'regressed', completeness: 'incomplete' });
    expect(chooseBaseline({ run, explicit: bad, pinned: null, history: [] })).toMatchObject({ kind: 'baseline', chosen_by: 'explicit', run: { run_id: 'bad' } });
    expect(chooseBaseline({ run, explicit: null, pinned: bad, history: [] })).toMatchObject({ kind: 'baseline', chosen_by: 'pinned', run: { run_id: 'bad' } });
  });

  it('automatic: the same variant when the run has one, any variant when it has none', () => {
    const history = [ref('v1', '2026-11-30T08:00:00Z', { variant: 'v1' }), ref('v2', '2026-11-30T09:00:00Z', { variant: 'v2' })];
    expect(chooseBaseline({ run: { ...run, variant: 'v1' }, explicit: null, pinned: null, history })).toMatchObject({ run: { run_id: 'v1' } });
    expect(chooseBaseline({ run, explicit: null, pinned: null, history })).toMatchObject({ run: { run_id: 'v2' } });
  });

  it('automatic: never a later run, never the run itself; none when nothing qualifies', () => {
    expect(chooseBaseline({ run, explicit: null, pinned: null, history: [ref('later', '2026-11-30T11:00:00Z'), { ...run, verdict: 'no_regression' }] })).toEqual({ kind: 'none' });
  });

  it('explicit beats pinned beats automatic (G5)', () => {
    const history = [ref('auto', '2026-11-30T09:00:00Z')];
    const pinned = ref('pin', '2026-11-29T09:00:00Z');
    const explicit = ref('exp', '2026-11-28T09:00:00Z');
    expect(chooseBaseline({ run, explicit, pinned, history })).toMatchObject({ chosen_by: 'explicit', run: { run_id: 'exp' } });
    expect(chooseBaseline({ run, explicit: null, pinned, history })).toMatchObject({ chosen_by: 'pinned', run: { run_id: 'pin' } });
  });

  it('refuses an explicit baseline of another suite key, or the run itself', () => {
    expect(chooseBaseline({ run, explicit: ref('x', '2026-11-30T09:00:00Z', { suite_key: 'other' }), pinned: null, history: [] })).toMatchObject({ kind: 'refused', code: 'BASELINE_OTHER_SUITE' });
    expect(chooseBaseline({ run, explicit: run, pinned: null, history: [] })).toMatchObject({ kind: 'refused', code: 'BASELINE_IS_RUN' });
  });
});

describe('unit: what changed between two runs (G4, beyond the seeds)', () => {
  it('reports suite version, scorer versions, judge model and prompt version differences', () => {
    const c = whatChanged(
      { suite_version: 1, scorer_versions: { exact: '1.0.0', regex: '1.0.0' }, judge_model: 'gpt-4o-2024-08-06', prompt_version: 'judge-v1' },
      { suite_version: 2, scorer_versions: { exact: '1.1.0', contains: '1.0.0' }, judge_model: 'gpt-4o-2024-08-06', prompt_version: 'judge-v2' },
    );
    expect(c.suite_version).toEqual({ baseline: 1, run: 2 });
    expect(c.scorer_versions).toEqual([
      { scorer: 'contains', baseline: null, run: '1.0.0' },
      { scorer: 'exact', baseline: '1.0.0', run: '1.1.0' },
      { scorer: 'regex', baseline: '1.0.0', run: null },
    ]);
    expect(c.judge_model).toBeNull();
    expect(c.prompt_version).toEqual({ baseline: 'judge-v1', run: 'judge-v2' });
    expect(c.anything_changed).toBe(true);
    expect(whatChanged({ suite_version: 1, scorer_versions: { exact: '1' } }, { suite_version: 1, scorer_versions: { exact: '1' } }).anything_changed).toBe(false);
  });
});
