/**
 * The one codec of a run's internal events (`{type, version, data}`, run-events.ts): every reader of the
 * bus or the log - the read model, the regression app, the run's model folding a stream - validates an
 * event through `decodeRunEvent` before it trusts it. Pure: no framework, no I/O.
 *
 * It checks `type`, `version` (`cases.scored` has v1, v2 and v3, every other type v1 only) and each `data`
 * field a consumer relies on: ids safe (`isSafeId`), counts non-negative safe integers, scores and
 * thresholds in [0, 1], score sums finite and within [0, n], every vocabulary (source, seal reason,
 * verdict, completeness, baseline choice) in its set. Unknown fields are left alone, so an optional field
 * can be added to a version without a new one.
 *
 * A refusal names fields and constraints only, `data.case_count: isCount`, never a value (D1): its reason
 * goes to dead letters and logs. At most MAX_EVENT_REASON_ISSUES issues are joined, then `; and N more`.
 */
import { isProjectId, isSafeId } from '@evals/contracts';
import type { BaselineChoice } from '../regression/baseline';
import { columnarIssues } from './case-outcomes';
import type { RunComparedV1, RunEvent, RunSealedV1, RunSource } from './run-events';

/** A refusal carries `issues`, the list its `reason` joins, for a caller that adds its own (the read model). */
export type RunEventDecoding =
  | { readonly ok: true; readonly event: RunEvent }
  | { readonly ok: false; readonly reason: string; readonly issues: readonly string[] };

export const MAX_EVENT_REASON_ISSUES = 10;

export function decodeRunEvent(raw: unknown): RunEventDecoding {
  if (!isPlainObject(raw)) return refused(['event: isObject']);
  const { type, version, data } = raw;
  if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) return refused(['type: isRunEventType']);
  const rules = typeof version === 'number' ? SCHEMAS[`${type} v${version}` as RunEventKey] : undefined;
  if (rules === undefined) return refused(['version: supported']);
  if (!isPlainObject(data)) return refused(['data: isObject']);
  const issues = checkAll(data, 'data', rules);
  // The rules of its (type, version) are what make it that event; the data is the reader's own object.
  return issues.length === 0 ? { ok: true, event: { type, version, data } as unknown as RunEvent } : refused(issues);
}

/** `path: constraint` issues joined with `; `, at most MAX_EVENT_REASON_ISSUES of them. */
export function joinIssues(issues: readonly string[]): string {
  const shown = issues.slice(0, MAX_EVENT_REASON_ISSUES);
  return shown.join('; ') + (issues.length > shown.length ? `; and ${issues.length - shown.length} more` : '');
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

function refused(issues: readonly string[]): RunEventDecoding {
  return { ok: false, reason: joinIssues(issues), issues };
}

// --- the rules ------------------------------------------------------------------------------------------

type Fields = Readonly<Record<string, unknown>>;
/** The issues of one object at `path`; a rule may read the sibling fields (`passed <= n`). */
type Rule = (o: Fields, path: string) => readonly string[];
type Test = (value: unknown, o: Fields) => boolean;

function checkAll(o: Fields, path: string, rules: readonly Rule[]): string[] {
  return rules.flatMap((rule) => rule(o, path));
}

/** `name` passes `test`, else the issue `path.name: constraint`. */
function field(name: string, test: Test, constraint: string): Rule {
  return (o, path) => (test(o[name], o) ? [] : [`${path}.${name}: ${constraint}`]);
}

/** An optional object (absent, or null when `nullable`) whose own fields follow `rules`. */
function object(name: string, rules: readonly Rule[], nullable: boolean): Rule {
  return (o, path) => {
    const v = o[name];
    if (v === undefined || (nullable && v === null)) return [];
    return isPlainObject(v) ? checkAll(v, `${path}.${name}`, rules) : [`${path}.${name}: ${nullable ? 'isObjectOrNull' : 'isObject'}`];
  };
}

/** An array of objects following `rules`; each issue once, as `path.name[].field: constraint`. */
function each(name: string, rules: readonly Rule[]): Rule {
  return (o, path) => {
    const items = o[name];
    if (!Array.isArray(items)) return [`${path}.${name}: isArray`];
    const at = `${path}.${name}[]`;
    const issues = new Set<string>();
    for (const item of items) {
      if (!isPlainObject(item)) issues.add(`${at}: isObject`);
      else for (const issue of checkAll(item, at, rules)) issues.add(issue);
    }
    return [...issues];
  };
}

const optional =
  (test: Test): Test =>
  (v, o) =>
    v === undefined || test(v, o);
const orNull =
  (test: Test): Test =>
  (v, o) =>
    v === null || test(v, o);
/** A vocabulary; the record makes the compiler check it lists exactly the values of the type. */
const oneOf = <T extends string>(values: Record<T, true>): Test => {
  const set = new Set<unknown>(Object.keys(values));
  return (v) => set.has(v);
};

const isString = (v: unknown): v is string => typeof v === 'string';
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isPositiveCount = (v: unknown): v is number => isCount(v) && v >= 1;
const isNonNegativeNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isUnit = (v: unknown): v is number => isNonNegativeNumber(v) && v <= 1;
const isStringArray = (v: unknown): boolean => Array.isArray(v) && v.every(isString);
const isStringMap = (v: unknown): boolean => isPlainObject(v) && Object.values(v).every(isString);
/** A count of the event's `n` cases (when `n` itself is wrong, that is `n`'s issue). */
const isCountNotAboveN: Test = (v, o) => isCount(v) && (!isCount(o.n) || v <= o.n);
/** A sum of `n` scores in [0, 1], with room for the floating-point error of the sum. */
const isSumNotAboveN: Test = (v, o) => isNonNegativeNumber(v) && (!isCount(o.n) || v <= o.n + 1e-9);

function isPlainObject(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const SOURCES = oneOf<RunSource>({ sandbox: true, ci: true, inline: true, session_sample: true });
const SEAL_REASONS = oneOf<NonNullable<RunSealedV1['reason']>>({ client: true, expired: true });
const VERDICTS = oneOf<RunComparedV1['verdict']>({ regressed: true, inconclusive_noise: true, no_regression: true, no_baseline: true });
const COMPLETENESS = oneOf<NonNullable<RunComparedV1['completeness']>>({ complete: true, incomplete: true, expired: true });
const BASELINE_CHOICES = oneOf<BaselineChoice>({ explicit: true, pinned: true, automatic: true });

const RUN_ID = field('run_id', isSafeId, 'isSafeId');

/** RunJudgeUsageV1: counts, tokens and money. */
const JUDGE_USAGE: readonly Rule[] = [
  ...['cases', 'calls', 'errors', 'credential_missing', 'not_configured', 'skipped', 'cache_hits', 'cache_misses', 'input_tokens', 'output_tokens'].map((name) =>
    field(name, isCount, 'isCount'),
  ),
  field('cost_usd', isNonNegativeNumber, 'isNonNegativeNumber'),
  field('model', orNull(isString), 'isStringOrNull'),
  field('prompt_version', orNull(isString), 'isStringOrNull'),
];

/** RunJudgeStabilityV1: counts and ids (issue 13). */
const JUDGE_STABILITY: readonly Rule[] = [
  field('repeats', isCount, 'isCount'),
  field('cases', isCount, 'isCount'),
  field('stable', (v, o) => isCount(v) && (!isCount(o.cases) || v <= o.cases), 'isCountNotAboveCases'),
  field('unstable_case_ids', isStringArray, 'isStringArray'),
];

/** `run.opened v1`, `cases.scored v2`...: one key per (type, version) of RunEvent, no other. */
type RunEventKey = RunEvent extends infer E ? (E extends RunEvent ? `${E['type']} v${E['version']}` : never) : never;

const SCHEMAS: Readonly<Record<RunEventKey, readonly Rule[]>> = {
  'run.opened v1': [
    RUN_ID,
    field('project', optional(isProjectId), 'isProjectId'),
    field('suite_key', isNonEmptyString, 'isString'),
    field('suite_version', isPositiveCount, 'isPositiveInteger'),
    field('suite_content_hash', isString, 'isString'),
    field('pass_threshold', isUnit, 'inUnitInterval'),
    field('regression_threshold', isUnit, 'inUnitInterval'),
    field('subject_kind', isNonEmptyString, 'isString'),
    field('subject_id', isNonEmptyString, 'isString'),
    field('variant', orNull(isNonEmptyString), 'isStringOrNull'),
    field('baseline_run_id', orNull(isNonEmptyString), 'isStringOrNull'),
    field('source', SOURCES, 'isRunSource'),
    field('case_count', isCount, 'isCount'),
    field('scorer_versions', isStringMap, 'isStringMap'),
    object('sample', [field('size', isCount, 'isCount'), field('seed', isString, 'isString'), field('case_ids', isStringArray, 'isStringArray')], true),
    field('judge_cache', optional(isBoolean), 'isBoolean'),
    field('judge_skip', optional(orNull(isNonEmptyString)), 'isStringOrNull'),
    field('request_hash', optional(isString), 'isString'),
    object('judge_throttle', [field('case_ids', isStringArray, 'isStringArray')], true),
  ],
  'outputs.received v1': [RUN_ID],
  'run.sealed v1': [RUN_ID, field('reason', optional(SEAL_REASONS), 'isSealReason')],
  'cases.scored v1': [
    RUN_ID,
    each('results', [
      field('case_id', isNonEmptyString, 'isString'),
      field('scorer', isString, 'isString'),
      field('scorer_version', isString, 'isString'),
      field('score', isUnit, 'inUnitInterval'),
      field('passed', isBoolean, 'isBoolean'),
      field('label', isString, 'isString'),
      field('judge_model', optional(isString), 'isString'),
      field('prompt_version', optional(isString), 'isString'),
    ]),
  ],
  'cases.scored v2': [
    RUN_ID,
    // A batch that inserted no row emits no event.
    field('n', isPositiveCount, 'isPositiveCount'),
    field('passed', isCountNotAboveN, 'isCountNotAboveN'),
    field('score_sum', isSumNotAboveN, 'isSumOfUnitScores'),
  ],
  'cases.scored v3': [
    RUN_ID,
    field('n', isPositiveCount, 'isPositiveCount'),
    field('passed', isCountNotAboveN, 'isCountNotAboveN'),
    field('score_sum', isSumNotAboveN, 'isSumOfUnitScores'),
    // The columns against each other and against the counts (case-outcomes.ts).
    (o, path) => columnarIssues(o, path),
  ],
  'run.scored v1': [
    RUN_ID,
    field('n', isCount, 'isCount'),
    field('passed', isCountNotAboveN, 'isCountNotAboveN'),
    field('score_sum', isSumNotAboveN, 'inRangeZeroToN'),
    field('missing_case_ids', isStringArray, 'isStringArray'),
    field('missing_count', optional(isCountNotAboveN), 'isCountNotAboveN'),
    object('judge', JUDGE_USAGE, false),
    field('expired', optional((v: unknown) => v === true), 'isTrueOrAbsent'),
    object('judge_stability', JUDGE_STABILITY, false),
  ],
  'run.compared v1': [
    RUN_ID,
    // The decision as the read model stores it: a CHECK or uuid violation would fail its whole batch.
    field('verdict', VERDICTS, 'isRunVerdict'),
    field('completeness', optional(COMPLETENESS), 'isRunCompleteness'),
    field('baseline_run_id', optional(orNull(isSafeId)), 'isSafeIdOrNull'),
    field('chosen_by', optional(orNull(BASELINE_CHOICES)), 'isBaselineChoiceOrNull'),
    field('comparison', optional(orNull(isPlainObject)), 'isObjectOrNull'),
    field('finding_id', optional(orNull(isUuid)), 'isUuidOrNull'),
  ],
};

const KNOWN_TYPES = new Set<string>(Object.keys(SCHEMAS).map((key) => key.slice(0, key.indexOf(' '))));
