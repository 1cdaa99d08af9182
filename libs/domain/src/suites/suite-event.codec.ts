/**
 * The codec of a suite version's events (suite-events.ts): every reader validates a stored event through
 * `decodeSuiteEvent` before it folds it. Pure. A refusal names fields and constraints only
 * (`data.cases[].tags: isStringArray`), never a value: suite content may be large, and reasons reach logs.
 */
import { isProjectId, isSafeId, isSuiteKey } from '@evals/contracts';
import { joinIssues } from '../runs/run-event.codec';
import type { SuiteEvent } from './suite-events';

export type SuiteEventDecoding = { readonly ok: true; readonly event: SuiteEvent } | { readonly ok: false; readonly reason: string; readonly issues: readonly string[] };

type Fields = Readonly<Record<string, unknown>>;

export function decodeSuiteEvent(raw: unknown): SuiteEventDecoding {
  if (!isObject(raw)) return refused(['event: isObject']);
  const { type, version, data } = raw;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(CHECKS, type)) return refused(['type: isSuiteEventType']);
  // Every type has v1 only.
  if (version !== 1) return refused(['version: supported']);
  const check = CHECKS[type];
  if (!isObject(data)) return refused(['data: isObject']);
  const issues = check(data);
  return issues.length === 0 ? { ok: true, event: { type, version, data } as unknown as SuiteEvent } : refused(issues);
}

function refused(issues: readonly string[]): SuiteEventDecoding {
  return { ok: false, reason: joinIssues(issues), issues };
}

const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isPositive = (v: unknown): boolean => isCount(v) && v >= 1;
const isUnit = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;
const isString = (v: unknown): v is string => typeof v === 'string';

/** `[path, holds]` pairs to the issues of those that do not hold. */
function issuesOf(checks: ReadonlyArray<readonly [string, boolean]>): string[] {
  return checks.filter(([, holds]) => !holds).map(([issue]) => issue);
}

const versionOf = (d: Fields): Array<readonly [string, boolean]> => [
  ['data.suite_key: isSuiteKey', isSuiteKey(d.suite_key)],
  ['data.version: isPositiveInteger', isPositive(d.version)],
];

const CHECKS: Readonly<Record<string, (d: Fields) => string[]>> = {
  'suite.published': (d) =>
    issuesOf([
      ...versionOf(d),
      ['data.project: isProjectId', d.project === undefined || isProjectId(d.project)],
      ['data.content_hash: isString', isString(d.content_hash) && d.content_hash.length > 0],
      ['data.case_count: isCount', isCount(d.case_count)],
      ['data.description: isStringOrNull', d.description === null || isString(d.description)],
      ['data.default_scorer: isObject', isObject(d.default_scorer)],
      ['data.pass_threshold: inUnitInterval', isUnit(d.pass_threshold)],
      ['data.regression_threshold: inUnitInterval', isUnit(d.regression_threshold)],
      ['data.golden_fixtures: isBoolean', typeof d.golden_fixtures === 'boolean'],
      ['data.created_at: isString', isString(d.created_at)],
    ]),
  'suite.cases.published': (d) => {
    const part = d.part;
    const issues = issuesOf([
      ...versionOf(d),
      ['data.from: isCount', isCount(d.from)],
      // Whole cases or one part of a large case, never both, never neither.
      ['data: casesOrPart', (d.cases === undefined) !== (part === undefined)],
      ['data.cases: isArray', d.cases === undefined || Array.isArray(d.cases)],
      ['data.part: isObject', part === undefined || isObject(part)],
    ]);
    if (isObject(part)) {
      issues.push(
        ...issuesOf([
          ['data.part.count: isPositiveInteger', isPositive(part.count)],
          ['data.part.index: isCountBelowCount', isCount(part.index) && (!isCount(part.count) || part.index < part.count)],
          ['data.part.text: isString', isString(part.text)],
        ]),
      );
    }
    if (Array.isArray(d.cases)) issues.push(...caseIssues(d.cases, 'data.cases[]'));
    return issues;
  },
};

/** The issues of a list of cases, each once (`data.cases[].case_id: isSafeId`). */
export function caseIssues(cases: readonly unknown[], at: string): string[] {
  const issues = new Set<string>();
  for (const c of cases) {
    if (!isObject(c)) {
      issues.add(`${at}: isObject`);
      continue;
    }
    const checks = issuesOf([
      [`${at}.case_id: isSafeId`, isSafeId(c.case_id)],
      [`${at}.scorer: isObjectOrNull`, c.scorer === null || isObject(c.scorer)],
      [`${at}.tags: isStringArray`, Array.isArray(c.tags) && c.tags.every(isString)],
    ]);
    checks.forEach((issue) => issues.add(issue));
  }
  return [...issues];
}
