/**
 * Per-case results as they cross between apps (issue 27, `cases.scored` v3): the regression app pairs two
 * runs' cases and the read model shows a run's cases from the log, not from the worker's evidence table.
 * v1 carried every result as an object and cost the pipeline most of its throughput (docs/benchmarks.md);
 * v3 carries the same facts columnar - the case ids, a bitmap of verdicts, a score only where it is not the
 * verdict's 1 or 0, and labels, scorers, judge pins and times as indexes into dictionaries of the event - so
 * a batch of a thousand deterministic cases costs little more than its case ids. Never an output (D1): the
 * label is the scorer's redacted vocabulary (D2) and the decoder refuses one longer than a label may be.
 * Pure: no framework, no I/O.
 */
import type { CaseEvidence } from './case-scoring';
import type { CaseResultV1, CasesScoredV3, RunEvent } from './run-events';
import { MAX_LABEL_CHARS } from './redaction';

/**
 * One case's result: what the regression app and the read model need of its evidence row, no more - the
 * score, verdict, redacted label (D2) and time, and the judge pin that graded it (G4, J4): `llm_judge` cases
 * that reached the judge; null otherwise.
 */
export type CaseOutcome = Pick<CaseEvidence, 'case_id' | 'scorer' | 'scorer_version' | 'score' | 'passed' | 'label' | 'scored_at'> & {
  readonly judge_model: string | null;
  readonly prompt_version: string | null;
};

/** What crosses of an evidence row: no hash, no length, no cost (D1, D2). */
export function caseOutcomeOf(e: CaseEvidence): CaseOutcome {
  return {
    case_id: e.case_id,
    scorer: e.scorer,
    scorer_version: e.scorer_version,
    score: e.score,
    passed: e.passed,
    label: e.label,
    judge_model: e.judge?.judge_model ?? null,
    prompt_version: e.judge?.prompt_version ?? null,
    scored_at: e.scored_at,
  };
}

/**
 * Cases per event: a micro-batch may hold tens of thousands of one run's rows, and an event is relayed as one
 * bus message - 8 MiB at most in a deployment (MAX_MESSAGE_BYTES), 1 MiB on a stock NATS server: 2 000 cases
 * of the longest id (200 characters) stay under half a MiB.
 */
export const MAX_CASES_PER_EVENT = 2000;

/** The counts a `cases.scored` adds to a run's running aggregate; null when it adds none (a backfill). */
export function casesScoredCounts(event: Extract<RunEvent, { type: 'cases.scored' }>): { n: number; passed: number; score_sum: number } | null {
  switch (event.version) {
    case 1:
      return { n: event.data.results.length, passed: event.data.results.filter((r) => r.passed).length, score_sum: event.data.results.reduce((s, r) => s + r.score, 0) };
    case 2:
      return event.data;
    case 3:
      // A backfill repeats results whose rows earlier v1/v2 events of the run counted already.
      return event.data.backfill ? null : { n: event.data.n, passed: event.data.passed, score_sum: event.data.score_sum };
  }
}

/**
 * The `cases.scored` v3 events of one batch of a run's results, MAX_CASES_PER_EVENT cases each, in the given
 * order. `backfill`: results already counted by earlier events (migration of a log from before v3).
 */
export function encodeCaseOutcomes(runId: string, outcomes: readonly CaseOutcome[], options: { readonly backfill?: boolean; readonly maxCases?: number } = {}): CasesScoredV3[] {
  const size = options.maxCases ?? MAX_CASES_PER_EVENT;
  const out: CasesScoredV3[] = [];
  for (let start = 0; start < outcomes.length; start += size) out.push(encodeChunk(runId, outcomes.slice(start, start + size), options.backfill === true));
  return out;
}

function encodeChunk(runId: string, outcomes: readonly CaseOutcome[], backfill: boolean): CasesScoredV3 {
  const n = outcomes.length;
  const labels = new Dictionary();
  const scorers = new Dictionary();
  const judges = new Dictionary();
  const times = new Dictionary();
  const bits = new Uint8Array(Math.ceil(n / 8));
  const caseIds = new Array<string>(n);
  const labelOf = new Array<number>(n);
  const scorerOf = new Array<number>(n);
  const judgeOf = new Array<number>(n);
  const timeOf = new Array<number>(n);
  const scoreAt: number[] = [];
  const scoreValues: number[] = [];
  let passed = 0;
  let scoreSum = 0;
  for (let i = 0; i < n; i++) {
    const o = outcomes[i];
    caseIds[i] = o.case_id;
    if (o.passed) {
      bits[i >> 3] |= 1 << (i & 7);
      passed++;
    }
    scoreSum += o.score;
    if (o.score !== (o.passed ? 1 : 0)) {
      scoreAt.push(i);
      scoreValues.push(o.score);
    }
    labelOf[i] = labels.index(o.label);
    scorerOf[i] = scorers.index(pair(o.scorer, o.scorer_version));
    judgeOf[i] = o.judge_model === null ? -1 : judges.index(pair(o.judge_model, o.prompt_version ?? ''));
    timeOf[i] = times.index(o.scored_at);
  }
  return {
    run_id: runId,
    n,
    passed,
    score_sum: scoreSum,
    case_ids: caseIds,
    passed_bits: toBase64(bits),
    score_at: scoreAt,
    score_values: scoreValues,
    labels: labels.values,
    label_of: labelOf,
    scorers: scorers.values.map(unpair),
    // A column every case shares the first entry of is left out: most batches have one scorer, one time, no judge.
    ...(scorers.values.length > 1 ? { scorer_of: scorerOf } : {}),
    ...(judges.values.length > 0 ? { judges: judges.values.map(unpair), judge_of: judgeOf } : {}),
    scored_at: times.values,
    ...(times.values.length > 1 ? { scored_at_of: timeOf } : {}),
    ...(backfill ? { backfill: true as const } : {}),
  };
}

/**
 * The results a `cases.scored` carries: v1's in full, v3's decoded, none for v2 (counts only - a log from
 * before v3 has them from the backfill). `occurredAt` stands for v1's missing `scored_at`. The event must have
 * passed the codec (decodeRunEvent), which checks every index and length this trusts.
 */
export function caseOutcomesOf(event: Extract<RunEvent, { type: 'cases.scored' }>, occurredAt: string): CaseOutcome[] {
  if (event.version === 1) return event.data.results.map((r) => fromV1(r, occurredAt));
  if (event.version === 2) return [];
  const d = event.data;
  const bits = fromBase64(d.passed_bits) ?? new Uint8Array(0);
  const scores = new Map<number, number>();
  d.score_at.forEach((at, k) => scores.set(at, d.score_values[k]));
  return d.case_ids.map((case_id, i) => {
    const passed = (bits[i >> 3] & (1 << (i & 7))) !== 0;
    const [scorer, scorer_version] = d.scorers[d.scorer_of?.[i] ?? 0];
    const judge = d.judge_of && d.judges && d.judge_of[i] >= 0 ? d.judges[d.judge_of[i]] : null;
    return {
      case_id,
      scorer,
      scorer_version,
      score: scores.get(i) ?? (passed ? 1 : 0),
      passed,
      label: d.labels[d.label_of[i]],
      judge_model: judge ? judge[0] : null,
      prompt_version: judge ? judge[1] : null,
      scored_at: d.scored_at[d.scored_at_of?.[i] ?? 0],
    };
  });
}

function fromV1(r: CaseResultV1, occurredAt: string): CaseOutcome {
  return {
    case_id: r.case_id,
    scorer: r.scorer,
    scorer_version: r.scorer_version,
    score: r.score,
    passed: r.passed,
    label: r.label,
    judge_model: r.judge_model ?? null,
    prompt_version: r.judge_model === undefined ? null : (r.prompt_version ?? ''),
    scored_at: occurredAt,
  };
}

/**
 * The issues of a v3 `data` beyond its plain fields (the codec's rules): every column as long as `case_ids`,
 * every index inside its dictionary, the bitmap exactly `n` bits, the counts those of the columns. Field
 * names and constraints only, never a value (D1).
 */
export function columnarIssues(d: Readonly<Record<string, unknown>>, path: string): string[] {
  const issues: string[] = [];
  const ids = d.case_ids;
  if (!Array.isArray(ids) || !ids.every((v) => typeof v === 'string' && v.length > 0)) return [`${path}.case_ids: isNonEmptyStringArray`];
  const n = ids.length;
  if (d.n !== n) issues.push(`${path}.n: equalsCaseCount`);
  if (new Set(ids).size !== n) issues.push(`${path}.case_ids: isUnique`);
  const dictionary = (name: string, test: (v: unknown) => boolean, constraint: string, nonEmpty: boolean): number => {
    const v = d[name];
    if (!Array.isArray(v) || !v.every(test) || (nonEmpty && v.length === 0 && n > 0)) {
      issues.push(`${path}.${name}: ${constraint}`);
      return -1;
    }
    return v.length;
  };
  const column = (name: string, size: number, optional: boolean, allowNone: boolean): void => {
    const v = d[name];
    if (v === undefined && optional) return;
    if (size < 0) return; // its dictionary is the issue
    const fits = (x: unknown) => Number.isSafeInteger(x) && (x as number) < size && (x as number) >= (allowNone ? -1 : 0);
    if (!Array.isArray(v) || v.length !== n || !v.every(fits)) issues.push(`${path}.${name}: indexesOfCaseCount`);
  };
  column('label_of', dictionary('labels', isLabel, 'isLabelArray', true), false, false);
  const scorerCount = dictionary('scorers', isPairOfStrings, 'isPairArray', true);
  column('scorer_of', scorerCount, true, false);
  if (d.scorer_of === undefined && scorerCount > 1) issues.push(`${path}.scorer_of: requiredWithSeveralScorers`);
  if (d.judges !== undefined || d.judge_of !== undefined) {
    column('judge_of', dictionary('judges', isPairOfStrings, 'isPairArray', false), false, true);
  }
  const timeCount = dictionary('scored_at', isTimestamp, 'isTimestampArray', true);
  column('scored_at_of', timeCount, true, false);
  if (d.scored_at_of === undefined && timeCount > 1) issues.push(`${path}.scored_at_of: requiredWithSeveralTimes`);
  const bits = typeof d.passed_bits === 'string' ? fromBase64(d.passed_bits) : null;
  if (bits === null || bits.length !== Math.ceil(n / 8) || (n % 8 !== 0 && bits.length > 0 && bits[bits.length - 1] >> n % 8 !== 0)) {
    issues.push(`${path}.passed_bits: isBitmapOfCaseCount`);
  } else if (d.passed !== popCount(bits)) {
    issues.push(`${path}.passed: equalsPassedBits`);
  }
  const at = d.score_at;
  const values = d.score_values;
  const ascending = Array.isArray(at) && at.every((x, k) => Number.isSafeInteger(x) && x >= 0 && x < n && (k === 0 || x > at[k - 1]));
  if (!ascending) issues.push(`${path}.score_at: isAscendingCaseIndexes`);
  if (!Array.isArray(values) || !values.every(isUnit) || (Array.isArray(at) && values.length !== at.length)) issues.push(`${path}.score_values: unitScoresOfScoreAt`);
  if (bits !== null && issues.length === 0) {
    let sum = 0;
    const explicit = new Map((at as number[]).map((x, k) => [x, (values as number[])[k]]));
    for (let i = 0; i < n; i++) sum += explicit.get(i) ?? ((bits[i >> 3] >> (i & 7)) & 1);
    if (typeof d.score_sum !== 'number' || Math.abs(d.score_sum - sum) > 1e-9 * Math.max(1, n)) issues.push(`${path}.score_sum: equalsDecodedScores`);
  }
  if (d.backfill !== undefined && d.backfill !== true) issues.push(`${path}.backfill: isTrueOrAbsent`);
  return issues;
}

const isLabel = (v: unknown) => typeof v === 'string' && v.length <= MAX_LABEL_CHARS;
const isPairOfStrings = (v: unknown) => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string';
const isTimestamp = (v: unknown) => typeof v === 'string' && v.length <= 40 && !Number.isNaN(Date.parse(v));
const isUnit = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;

function popCount(bits: Uint8Array): number {
  let count = 0;
  for (let byte of bits) {
    while (byte !== 0) {
      count += byte & 1;
      byte >>= 1;
    }
  }
  return count;
}

/** Insertion-ordered distinct values and their indexes. */
class Dictionary {
  readonly values: string[] = [];
  private readonly indexes = new Map<string, number>();
  index(value: string): number {
    let i = this.indexes.get(value);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value);
      this.indexes.set(value, i);
    }
    return i;
  }
}

// Two strings as one dictionary key: NUL occurs in neither a scorer name nor a model pin.
const pair = (a: string, b: string) => `${a}\u0000${b}`;
const unpair = (key: string): [string, string] => {
  const cut = key.indexOf('\u0000');
  return [key.slice(0, cut), key.slice(cut + 1)];
};

// btoa/atob on binary strings: a global of every supported runtime, and no Buffer in a pure lib.
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of canonical base64, or null. */
function fromBase64(text: string): Uint8Array | null {
  if (!BASE64.test(text)) return null;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
