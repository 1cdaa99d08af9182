import { RUN_RULE_CODES, RunModel, RunRuleError, type RunOpenedV1 } from '@evals/domain';
import { busUnavailable, IntakeError, intakeErrorOf, underRunRules } from './intake-error';

const opened: RunOpenedV1 = {
  run_id: 'r1',
  suite_key: 's',
  suite_version: 1,
  suite_content_hash: 'sha256:x',
  pass_threshold: 0.8,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 2,
  scorer_versions: { exact: '1' },
};

function ruleError(fn: () => unknown): RunRuleError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RunRuleError) return error;
    throw error;
  }
  throw new Error('no RunRuleError thrown');
}

describe('unit: intake errors and their HTTP statuses (R7)', () => {
  it('maps the run model\'s refusals: EMPTY_RUN 422, RUN_ID_CONFLICT 409, a run never opened 404 UNKNOWN_RUN', () => {
    const empty = intakeErrorOf(ruleError(() => RunModel.decide({ type: 'open', data: opened, request_hash: 'h', outputs: 0 }, RunModel.initialRunState)));
    expect(empty).toMatchObject({ code: 'EMPTY_RUN', status: 422, field: 'outputs' });
    expect(empty.message).toMatch(/^the outputs list is empty: /);

    const state = RunModel.foldRun([{ event: { type: 'run.opened', version: 1, data: { ...opened, request_hash: 'h' } } }]);
    const conflict = intakeErrorOf(ruleError(() => RunModel.decide({ type: 'open', data: opened, request_hash: 'other', outputs: 2 }, state)));
    expect(conflict).toMatchObject({ code: 'RUN_ID_CONFLICT', status: 409, field: 'run_id' });

    const unknown = intakeErrorOf(ruleError(() => RunModel.decide({ type: 'seal', run_id: 'r9' }, RunModel.initialRunState)));
    expect(unknown).toMatchObject({ code: 'UNKNOWN_RUN', status: 404, field: 'run_id', message: 'no run r9' });
  });

  it('gives every rule code of the model a status', () => {
    for (const code of Object.values(RUN_RULE_CODES)) {
      const e = intakeErrorOf(new RunRuleError(code, 'x'));
      expect(e.status).toBeGreaterThanOrEqual(400);
      expect(e.status).toBeLessThan(500);
      expect(e.transient).toBe(false);
    }
  });

  it('underRunRules answers a RunRuleError as an IntakeError and lets every other error through', async () => {
    await expect(underRunRules(async () => Promise.reject(new RunRuleError('EMPTY_RUN', 'the outputs list is empty: x', 'outputs')))).rejects.toMatchObject({ code: 'EMPTY_RUN', status: 422 });
    const other = new Error('database down');
    await expect(underRunRules(async () => Promise.reject(other))).rejects.toBe(other);
    await expect(underRunRules(async () => 7)).resolves.toBe(7);
  });

  it('BUS_UNAVAILABLE is 503, transient, with Retry-After seconds, and does not show the adapter\'s message', () => {
    const cause = Object.assign(new Error('TIMEOUT nats://10.0.0.7:4222'), { code: 'TIMEOUT' });
    const e = busUnavailable(cause);
    expect(e).toBeInstanceOf(IntakeError);
    expect(e).toMatchObject({ code: 'BUS_UNAVAILABLE', status: 503, retryAfterSeconds: 2, transient: true });
    expect((e as { cause?: unknown }).cause).toBe(cause);
    expect(e.message).not.toContain('nats://');
    expect(new IntakeError('UNKNOWN_CASE', 'x').transient).toBe(false);
    expect(new IntakeError('UNKNOWN_CASE', 'x').retryAfterSeconds).toBeUndefined();
  });
});
