/**
 * The run's model (R7, G4): every transition and refusal of `decide`, table-driven, and the property that
 * ties `decide` to `evolve`: for any sequence of commands, folding the events decided gives the state the
 * next decision saw.
 */
import fc from 'fast-check';
import type { RunEvent, RunOpenedV1, RunScoredV1 } from './run-events';
import {
  RUN_RULE_CODES,
  RunRuleError,
  baselineEligibility,
  completeness,
  decide,
  evolve,
  foldRun,
  initialRunState,
  isSealed,
  judgeMayBeCalled,
  missingAtSeal,
  type RunCommand,
  type RunState,
} from './run.model';

const OPENED_AT = '2026-12-01T10:00:00.000Z';

const opened = (patch: Partial<RunOpenedV1> = {}): RunOpenedV1 => ({
  run_id: 'r1',
  suite_key: 'triage',
  suite_version: 1,
  suite_content_hash: 'sha256:abc',
  pass_threshold: 0.8,
  regression_threshold: 0.05,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 3,
  scorer_versions: { contains: '1' },
  ...patch,
});

const scoredData = (patch: Partial<RunScoredV1> = {}): RunScoredV1 => ({
  run_id: 'r1',
  n: 3,
  passed: 2,
  score_sum: 2,
  missing_count: 0,
  missing_case_ids: [],
  ...patch,
});

const open = (hash = 'h1', outputs: number | null = 3): RunCommand => ({ type: 'open', data: opened(), request_hash: hash, outputs });
/** The seal of an HTTP request, which says how many outputs it carried. */
const seal: RunCommand = { type: 'seal', run_id: 'r1', received: 3 };
/** The seal over the bus (`evals.run.sealed`): the run must have received an output itself. */
const busSeal: RunCommand = { type: 'seal', run_id: 'r1' };
const scored = (patch: Partial<RunScoredV1> = {}): RunCommand => ({ type: 'record_scored', data: scoredData(patch) });
const compared: RunCommand = { type: 'record_comparison', run_id: 'r1', verdict: 'no_regression' };
const expire = (now: string, ttl = 3600): RunCommand => ({ type: 'expire', run_id: 'r1', now, ttl_seconds: ttl });

/** Runs commands in order, each decided against the state the previous ones left. */
function play(...commands: RunCommand[]): RunState {
  let state = initialRunState;
  for (const c of commands) for (const e of decide(c, state)) state = evolve(state, e, OPENED_AT);
  return state;
}

function refusal(command: RunCommand, state: RunState): string {
  try {
    decide(command, state);
  } catch (error) {
    if (error instanceof RunRuleError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('RunModel.decide: transitions (R7)', () => {
  it.each<[string, RunState, RunCommand, string[], string]>([
    ['open a new run', initialRunState, open(), ['run.opened'], 'open'],
    ['open again with the same content', play(open()), open(), [], 'open'],
    ['open again after the seal', play(open(), seal), open(), [], 'sealed'],
    ['open with outputs that follow over the bus', initialRunState, open('h1', null), ['run.opened'], 'open'],
    ['seal an open run', play(open()), seal, ['run.sealed'], 'sealed'],
    ['seal a sealed run again', play(open(), seal), seal, [], 'sealed'],
    ['seal a scored run again', play(open(), seal, scored()), seal, [], 'scored'],
    ['expire an open run after its time', play(open()), expire('2026-12-01T11:00:00.000Z'), ['run.sealed'], 'sealed'],
    ['expire a sealed run', play(open(), seal), expire('2026-12-02T00:00:00.000Z'), [], 'sealed'],
    ['record the result of a sealed run', play(open(), seal), scored(), ['run.scored'], 'scored'],
    ['record the result again', play(open(), seal, scored()), scored(), [], 'scored'],
    ['record the verdict of a scored run', play(open(), seal, scored()), compared, ['run.compared'], 'compared'],
    ['record the verdict again', play(open(), seal, scored(), compared), compared, [], 'compared'],
  ])('%s', (_name, state, command, types, phase) => {
    const events = decide(command, state);
    expect(events.map((e) => e.type)).toEqual(types);
    expect(events.reduce((s, e) => evolve(s, e, OPENED_AT), state).phase).toBe(phase);
  });

  it('records the request hash on the opened event, and the reason of an expiry on the seal', () => {
    expect(decide(open('h7'), initialRunState)[0]).toMatchObject({ type: 'run.opened', data: { run_id: 'r1', request_hash: 'h7' } });
    const [sealed] = decide(expire('2026-12-01T11:00:00.000Z'), play(open()));
    expect(sealed).toEqual({ type: 'run.sealed', version: 1, data: { run_id: 'r1', reason: 'expired' } });
    expect(evolve(play(open()), sealed, OPENED_AT).seal_reason).toBe('expired');
    expect(play(open(), seal).seal_reason).toBe('client');
  });
});

describe('RunModel.decide: refusals with stable codes (R7)', () => {
  it.each<[string, RunState, RunCommand, string]>([
    ['an outputs list with no output', initialRunState, open('h1', 0), RUN_RULE_CODES.emptyRun],
    ['the same run id with other content', play(open('h1')), open('h2'), RUN_RULE_CODES.runIdConflict],
    ['the same run id with other content after the seal', play(open('h1'), seal), open('h2'), RUN_RULE_CODES.runIdConflict],
    ['a seal of a run that received no output', play(open('h1', null)), { type: 'seal', run_id: 'r1', received: 0 }, RUN_RULE_CODES.emptyRun],
    ['a seal of a run never opened', initialRunState, seal, RUN_RULE_CODES.runNotFound],
    ["issue 30: a seal of another project's run, as if it did not exist", play(open('h1', 1)), { type: 'seal', run_id: 'r1', project: 'team-b', received: 1 }, RUN_RULE_CODES.runNotFound],
    ['an expiry of a run never opened', initialRunState, expire('2026-12-02T00:00:00.000Z'), RUN_RULE_CODES.runNotFound],
    ['an expiry before the time is up', play(open()), expire('2026-12-01T10:59:59.999Z'), RUN_RULE_CODES.runNotExpired],
    ['a result for a run never opened', initialRunState, scored(), RUN_RULE_CODES.runNotFound],
    ['a result for an open run', play(open()), scored(), RUN_RULE_CODES.runNotSealed],
    ['a verdict for a sealed run not yet scored', play(open(), seal), compared, RUN_RULE_CODES.runNotScored],
    ['a verdict for an open run', play(open()), compared, RUN_RULE_CODES.runNotScored],
  ])('refuses %s', (_name, state, command, code) => {
    expect(refusal(command, state)).toBe(code);
  });

  it("issue 30: seals a run of the caller's own project (default when the run names none)", () => {
    expect(decide({ type: 'seal', run_id: 'r1', project: 'default', received: 1 }, play(open('h1', 1))).map((e) => e.type)).toEqual(['run.sealed']);
    const theirs = play({ type: 'open', data: opened({ project: 'team-b' }), request_hash: 'h1', outputs: 1 });
    expect(decide({ type: 'seal', run_id: 'r1', project: 'team-b', received: 1 }, theirs).map((e) => e.type)).toEqual(['run.sealed']);
    expect(refusal({ type: 'seal', run_id: 'r1', project: 'default', received: 1 }, theirs)).toBe(RUN_RULE_CODES.runNotFound);
  });

  it('a run opened before request hashes existed is never a conflict (it cannot be compared)', () => {
    const legacy = evolve(initialRunState, { type: 'run.opened', version: 1, data: opened() }, OPENED_AT);
    expect(decide(open('anything'), legacy)).toEqual([]);
  });

  it('a run folded without its opening time is never due (refused, not a crash)', () => {
    const timeless = evolve(initialRunState, { type: 'run.opened', version: 1, data: opened() });
    expect(refusal(expire('2030-01-01T00:00:00.000Z'), timeless)).toBe(RUN_RULE_CODES.runNotExpired);
  });

  it('an expiry is exactly due at opened_at + ttl', () => {
    expect(decide(expire('2026-12-01T10:00:10.000Z', 10), play(open()))).toHaveLength(1);
    expect(refusal(expire('2026-12-01T10:00:09.999Z', 10), play(open()))).toBe(RUN_RULE_CODES.runNotExpired);
  });
});

describe('RunModel: facts about a run', () => {
  it('sealed: after a seal or an expiry, never before', () => {
    expect(isSealed(play(open()))).toBe(false);
    expect(isSealed(play(open(), seal))).toBe(true);
    expect(isSealed(play(open(), seal, scored(), compared))).toBe(true);
  });

  it('the missing cases at the seal are the sampled ones without evidence (GT3, R1)', () => {
    const suite = ['a', 'b', 'c', 'd'];
    expect(missingAtSeal(play(open()), suite, new Set(['b']))).toEqual(['a', 'c', 'd']);
    const sampled = play({ type: 'open', data: opened({ sample: { size: 2, seed: 's', case_ids: ['c', 'd'] } }), request_hash: 'h', outputs: 1 });
    expect(missingAtSeal(sampled, suite, new Set(['d']))).toEqual(['c']);
  });

  it('a monitor run has no fixed case list: nothing is missing at its seal (D3)', () => {
    const monitor = play({ type: 'open', data: opened({ source: 'session_sample' }), request_hash: 'h', outputs: null });
    expect(missingAtSeal(monitor, ['a', 'b'], new Set(['a@s1']))).toEqual([]);
  });

  it('the judge may be called unless the run says it must not be (GT4)', () => {
    const empty = play({ type: 'open', data: opened({ judge_skip: '' }), request_hash: 'h', outputs: 1 });
    expect(judgeMayBeCalled(empty)).toBe(true);
    expect(judgeMayBeCalled(play(open()))).toBe(true);
    const skipped = play({ type: 'open', data: opened({ judge_skip: 'judge_credential_missing' }), request_hash: 'h', outputs: 1 });
    expect(judgeMayBeCalled(skipped)).toBe(false);
  });

  const judge = { cases: 4, calls: 0, errors: 0, credential_missing: 0, not_configured: 0, skipped: 0, cache_hits: 0, cache_misses: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, model: null, prompt_version: null };

  it.each<[string, RunState, string | null]>([
    ['not scored yet', play(open(), seal), null],
    ['every case scored', play(open(), seal, scored()), 'complete'],
    ['a missing output', play(open(), seal, scored({ missing_count: 1, missing_case_ids: ['c'] })), 'incomplete'],
    ['judge cases skipped', play(open(), seal, scored({ judge: { ...judge, skipped: 4 } })), 'incomplete'],
    ['a judge credential missing', play(open(), seal, scored({ judge: { ...judge, credential_missing: 1 } })), 'incomplete'],
    ['a judge error', play(open(), seal, scored({ judge: { ...judge, errors: 1 } })), 'incomplete'],
    ['judge cases all graded', play(open(), seal, scored({ judge: { ...judge, calls: 4 } })), 'complete'],
    ['expired', play(open(), expire('2026-12-01T12:00:00.000Z'), scored()), 'expired'],
  ])('completeness: %s', (_name, state, expected) => {
    expect(completeness(state)).toBe(expected);
  });

  it.each<[string, Parameters<typeof baselineEligibility>[0], boolean, string | undefined]>([
    ['complete, no regression', { completeness: 'complete', verdict: 'no_regression' }, true, undefined],
    ['complete, first run', { completeness: 'complete', verdict: 'no_baseline' }, true, undefined],
    ['complete but regressed', { completeness: 'complete', verdict: 'regressed' }, false, 'regressed'],
    ['complete but noise', { completeness: 'complete', verdict: 'inconclusive_noise' }, false, 'inconclusive_noise'],
    ['incomplete', { completeness: 'incomplete', verdict: 'no_regression' }, false, 'incomplete'],
    ['expired', { completeness: 'expired', verdict: 'no_baseline' }, false, 'expired'],
    ['not scored', { completeness: null, verdict: null }, false, 'not_scored'],
    ['complete, verdict not decided', { completeness: 'complete', verdict: null }, false, 'no_verdict'],
  ])('baseline eligibility (G4): %s', (_name, facts, eligible, reason) => {
    const e = baselineEligibility(facts);
    expect(e.eligible).toBe(eligible);
    expect(e.eligible ? undefined : e.reason).toBe(reason);
  });
});

describe('RunModel: decide and evolve agree (property)', () => {
  const command: fc.Arbitrary<RunCommand> = fc.oneof(
    fc.record({ hash: fc.constantFrom('h1', 'h2'), outputs: fc.constantFrom<number | null>(null, 0, 1, 5) }).map(({ hash, outputs }) => open(hash, outputs)),
    fc.constantFrom<number | undefined>(undefined, 0, 2).map((received): RunCommand => ({ type: 'seal', run_id: 'r1', ...(received === undefined ? {} : { received }) })),
    fc.integer({ min: 0, max: 7200 }).map((s) => expire(new Date(Date.parse(OPENED_AT) + s * 1000).toISOString())),
    fc.integer({ min: 0, max: 3 }).map((missing) => scored({ missing_count: missing, missing_case_ids: [] })),
    fc.constantFrom<RunCommand>(compared, { type: 'record_comparison', run_id: 'r1', verdict: 'regressed' }),
  );

  it('folding the decided events gives the state every next decision saw', () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 12 }), (commands) => {
        let state = initialRunState;
        const log: Array<{ event: RunEvent; occurred_at: string }> = [];
        for (const c of commands) {
          let events: RunEvent[];
          try {
            events = decide(c, state);
          } catch (error) {
            // A refusal decides nothing and changes nothing.
            expect(error).toBeInstanceOf(RunRuleError);
            continue;
          }
          for (const e of events) {
            state = evolve(state, e, OPENED_AT);
            log.push({ event: e, occurred_at: OPENED_AT });
          }
          expect(foldRun(log)).toEqual(state);
          // Deciding the same command again on the new state decides nothing new (idempotent retries).
          if (events.length > 0 && c.type !== 'open') expect(decide(c, state)).toEqual([]);
        }
        // The phases only move forward, in the documented order.
        const order = ['none', 'open', 'sealed', 'scored', 'compared'];
        const phases = log.map((_, i) => foldRun(log.slice(0, i + 1)).phase).map((p) => order.indexOf(p));
        expect(phases).toEqual([...phases].sort((a, b) => a - b));
        // At most one of each event type per run.
        const types = log.map((l) => l.event.type);
        expect(new Set(types).size).toBe(types.length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('RunModel: outputs over the bus and the seal (R7, EMPTY_RUN)', () => {
  const receive: RunCommand = { type: 'receive_outputs', run_id: 'r1' };

  it('records the first output once; later ones decide nothing', () => {
    const state = play(open('h1', null));
    expect(decide(receive, state).map((e) => e.type)).toEqual(['outputs.received']);
    expect(decide(receive, play(open('h1', null), receive))).toEqual([]);
    // Not after the seal (a late output is the worker's OUTPUT_AFTER_SEAL), and not for an unknown run.
    expect(decide(receive, play(open('h1', 3), seal))).toEqual([]);
    expect(refusal(receive, initialRunState)).toBe(RUN_RULE_CODES.runNotFound);
  });

  it('a bus seal of a run that received no output is EMPTY_RUN and leaves it open; after one, it seals', () => {
    const none = play(open('h1', null));
    expect(refusal(busSeal, none)).toBe(RUN_RULE_CODES.emptyRun);
    expect(none.phase).toBe('open');
    expect(decide(busSeal, play(open('h1', null), receive)).map((e) => e.type)).toEqual(['run.sealed']);
    // A request that carried its outputs says how many; the expiry seals regardless.
    expect(decide({ type: 'seal', run_id: 'r1', received: 2 }, none).map((e) => e.type)).toEqual(['run.sealed']);
    expect(decide(expire('2026-12-01T11:00:00.000Z'), none).map((e) => e.type)).toEqual(['run.sealed']);
  });
});
