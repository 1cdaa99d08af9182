import { isSafeId, isTimestamp } from '@evals/contracts';
import { parseRunEvent, RUN_EVENTS, type RunEvent } from '@evals/domain';

/**
 * Edge validation of one internal event before the run projection trusts it (docs/read-model.md). The
 * events come from our own log, but a malformed one must be dead-lettered, never poison the consumer: a
 * NOT NULL violation, a non-UUID message id in the inbox or a count that breaks the Wilson interval would
 * otherwise fail the whole micro-batch on every redelivery. Reasons name fields and constraints only, never
 * a value (D1): they go to the dead_letters table and the logs.
 */
export interface StoredEventLike {
  readonly type?: unknown;
  readonly version?: unknown;
  readonly data?: unknown;
  readonly metadata?: unknown;
  readonly position?: unknown;
  readonly stream_id?: unknown;
  readonly stream_version?: unknown;
}

export interface CheckedMetadata {
  readonly message_id: string;
  /** Falls back to message_id when absent (the event started its own flow). */
  readonly correlation_id: string;
  readonly occurred_at: string;
}

export interface CheckedEvent {
  readonly event: RunEvent;
  readonly metadata: CheckedMetadata;
  readonly position: number;
}

export type CheckResult = { readonly ok: true; readonly value: CheckedEvent } | { readonly ok: false; readonly reason: string; readonly message_id?: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SOURCES = new Set(['sandbox', 'ci', 'inline', 'session_sample']);
const VERDICTS = new Set(['regressed', 'inconclusive_noise', 'no_regression', 'no_baseline']);
const COMPLETENESS = new Set(['complete', 'incomplete', 'expired']);
const BASELINE_CHOICES = new Set(['explicit', 'pinned', 'automatic']);
const KNOWN_TYPES = new Set<string>(Object.values(RUN_EVENTS));
const MAX_REASON_ISSUES = 10;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export function checkEvent(raw: StoredEventLike | null | undefined): CheckResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'event: isObject' };
  const issues: string[] = [];
  const meta = raw.metadata as Record<string, unknown> | undefined;
  let messageId: string | undefined;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    issues.push('metadata: isObject');
  } else {
    if (isUuid(meta.message_id)) messageId = meta.message_id;
    else issues.push('metadata.message_id: isUuid');
    if (!isTimestamp(meta.occurred_at)) issues.push('metadata.occurred_at: isTimestamp');
    if (meta.correlation_id !== undefined && meta.correlation_id !== null && !isSafeId(meta.correlation_id)) {
      issues.push('metadata.correlation_id: isSafeId');
    }
  }
  if (!(typeof raw.position === 'number' && Number.isSafeInteger(raw.position) && raw.position >= 1)) issues.push('position: isPositiveInteger');
  if (typeof raw.type !== 'string' || !KNOWN_TYPES.has(raw.type)) issues.push('type: isRunEventType');
  // cases.scored is the one event with a second version (counts instead of results); v1 stays readable.
  const version = raw.version === 1 || (raw.version === 2 && raw.type === RUN_EVENTS.casesScored) ? raw.version : null;
  if (version === null) issues.push('version: supported');
  if (issues.length === 0) issues.push(...checkData(raw.type as string, version as 1 | 2, raw.data));
  if (issues.length > 0) return failure(issues, messageId);

  const parsed = parseRunEvent(raw);
  // Its error text is not used: it may quote a value. Everything it checks is checked above anyway.
  if ('error' in parsed) return failure(['data: parseRunEvent'], messageId);
  const m = meta as Record<string, unknown>;
  return {
    ok: true,
    value: {
      event: parsed,
      metadata: {
        message_id: messageId as string,
        correlation_id: isSafeId(m.correlation_id) ? m.correlation_id : (messageId as string),
        occurred_at: m.occurred_at as string,
      },
      position: raw.position as number,
    },
  };
}

function failure(issues: string[], messageId: string | undefined): CheckResult {
  const shown = issues.slice(0, MAX_REASON_ISSUES);
  const reason = shown.join('; ') + (issues.length > shown.length ? `; and ${issues.length - shown.length} more` : '');
  return messageId === undefined ? { ok: false, reason } : { ok: false, reason, message_id: messageId };
}

/** The fields the read model relies on, per event type; `path: constraint` for each problem. */
function checkData(type: string, version: 1 | 2, data: unknown): string[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return ['data: isObject'];
  const d = data as Record<string, unknown>;
  const issues: string[] = [];
  const need = (ok: boolean, issue: string) => {
    if (!ok) issues.push(issue);
  };
  need(isSafeId(d.run_id), 'data.run_id: isSafeId');
  switch (type) {
    case RUN_EVENTS.opened: {
      need(isNonEmptyString(d.suite_key), 'data.suite_key: isString');
      need(isInt(d.suite_version, 1), 'data.suite_version: isPositiveInteger');
      need(typeof d.suite_content_hash === 'string', 'data.suite_content_hash: isString');
      need(isUnit(d.pass_threshold), 'data.pass_threshold: inUnitInterval');
      need(isUnit(d.regression_threshold), 'data.regression_threshold: inUnitInterval');
      need(isNonEmptyString(d.subject_kind), 'data.subject_kind: isString');
      need(isNonEmptyString(d.subject_id), 'data.subject_id: isString');
      need(d.variant === null || isNonEmptyString(d.variant), 'data.variant: isStringOrNull');
      need(d.baseline_run_id === null || isNonEmptyString(d.baseline_run_id), 'data.baseline_run_id: isStringOrNull');
      need(typeof d.source === 'string' && SOURCES.has(d.source), 'data.source: isRunSource');
      need(isInt(d.case_count, 0), 'data.case_count: isCount');
      need(
        isPlainObject(d.scorer_versions) && Object.values(d.scorer_versions).every((v) => typeof v === 'string'),
        'data.scorer_versions: isStringMap',
      );
      break;
    }
    case RUN_EVENTS.sealed:
      break;
    case RUN_EVENTS.compared: {
      // The decision as read_run_verdicts stores it: a CHECK or uuid violation would fail the whole batch.
      const optional = (v: unknown, ok: (v: unknown) => boolean) => v === undefined || v === null || ok(v);
      need(typeof d.verdict === 'string' && VERDICTS.has(d.verdict), 'data.verdict: isRunVerdict');
      need(d.completeness === undefined || (typeof d.completeness === 'string' && COMPLETENESS.has(d.completeness)), 'data.completeness: isRunCompleteness');
      need(optional(d.baseline_run_id, isSafeId), 'data.baseline_run_id: isSafeIdOrNull');
      need(optional(d.chosen_by, (v) => typeof v === 'string' && BASELINE_CHOICES.has(v)), 'data.chosen_by: isBaselineChoiceOrNull');
      need(optional(d.comparison, isPlainObject), 'data.comparison: isObjectOrNull');
      need(optional(d.finding_id, isUuid), 'data.finding_id: isUuidOrNull');
      break;
    }
    case RUN_EVENTS.casesScored: {
      if (version === 2) {
        need(isInt(d.n, 1), 'data.n: isPositiveCount');
        need(isInt(d.passed, 0) && (!isInt(d.n, 0) || (d.passed as number) <= (d.n as number)), 'data.passed: isCountNotAboveN');
        need(
          typeof d.score_sum === 'number' && Number.isFinite(d.score_sum) && d.score_sum >= 0 && (!isInt(d.n, 0) || d.score_sum <= (d.n as number) + 1e-9),
          'data.score_sum: isSumOfUnitScores',
        );
        break;
      }
      if (!Array.isArray(d.results)) {
        issues.push('data.results: isArray');
        break;
      }
      const bad = new Set<string>();
      for (const r of d.results as unknown[]) {
        if (!isPlainObject(r)) {
          bad.add('data.results[]: isObject');
          continue;
        }
        if (!isNonEmptyString(r.case_id)) bad.add('data.results[].case_id: isString');
        if (typeof r.scorer !== 'string') bad.add('data.results[].scorer: isString');
        if (typeof r.scorer_version !== 'string') bad.add('data.results[].scorer_version: isString');
        if (!isUnit(r.score)) bad.add('data.results[].score: inUnitInterval');
        if (typeof r.passed !== 'boolean') bad.add('data.results[].passed: isBoolean');
        if (typeof r.label !== 'string') bad.add('data.results[].label: isString');
      }
      issues.push(...bad);
      break;
    }
    case RUN_EVENTS.scored: {
      need(isInt(d.n, 0), 'data.n: isCount');
      need(isInt(d.passed, 0) && (!isInt(d.n, 0) || (d.passed as number) <= (d.n as number)), 'data.passed: isCountNotAboveN');
      need(
        typeof d.score_sum === 'number' && Number.isFinite(d.score_sum) && d.score_sum >= 0 && (!isInt(d.n, 0) || d.score_sum <= (d.n as number) + 1e-9),
        'data.score_sum: inRangeZeroToN',
      );
      need(Array.isArray(d.missing_case_ids) && (d.missing_case_ids as unknown[]).every((c) => typeof c === 'string'), 'data.missing_case_ids: isStringArray');
      need(d.missing_count === undefined || (isInt(d.missing_count, 0) && (!isInt(d.n, 0) || (d.missing_count as number) <= (d.n as number))), 'data.missing_count: isCountNotAboveN');
      break;
    }
  }
  return issues;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

function isInt(v: unknown, min: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
}

function isUnit(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
}
