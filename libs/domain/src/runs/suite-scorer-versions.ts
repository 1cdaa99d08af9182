import { validateScorerSpec, type ScorerSpecValidation } from '@evals/scorers';
import { canonicalJson } from '../suites/canonical-json';
import { SuiteCompileError } from './case-scoring';

/** What a suite version's scorer versions depend on: each case's scorer spec and expected - not its input or tags. */
export interface ScorerSpecSuite {
  readonly suite_key: string;
  readonly version: number;
  readonly default_scorer: Readonly<Record<string, unknown>>;
  readonly cases: ReadonlyArray<{
    readonly case_id: string;
    readonly scorer: Readonly<Record<string, unknown>> | null;
    /** `undefined`: the case has no expected (as `compileSuite` reads it). */
    readonly expected?: unknown;
  }>;
}

/**
 * `compileSuite(suite).scorer_versions`, and the same SuiteCompileError for the first case it refuses,
 * without compiling a scorer per case (issue 15): the intake needs only these facts when a run opens.
 * Each distinct spec (by canonical JSON) is validated once, unless its validation read the case context
 * (`exact`, `json_equal`, `contains` without `value` check the case's `expected`): then each of its cases is
 * validated with its own expected, as compileSuite does. Whether the context was read is observed, not
 * assumed per scorer, so a scorer that starts reading it stays exact.
 */
export function suiteScorerVersions(suite: ScorerSpecSuite): Readonly<Record<string, string>> {
  const versions: Record<string, string> = {};
  // Spec key -> its validation when that read nothing of the case (it holds for every case with the spec),
  // or null when it did (each case validated on its own).
  const bySpec = new Map<string, ScorerSpecValidation | null>();
  for (const c of suite.cases) {
    const own = c.scorer ?? null;
    const spec = own ?? suite.default_scorer;
    const key = own === null ? DEFAULT_SPEC : specKey(own);
    let checked = key === null ? undefined : bySpec.get(key);
    if (!checked) {
      const tracked = validateTracked(spec, c.expected);
      checked = tracked.checked;
      if (key !== null && !bySpec.has(key)) bySpec.set(key, tracked.readCase ? null : checked);
    }
    if (!checked.ok) {
      throw new SuiteCompileError(`suite ${suite.suite_key} v${suite.version} case ${c.case_id}: ${checked.issues.map((i) => `${i.field}: ${i.code}`).join('; ')}`);
    }
    versions[checked.scorer.name] = checked.scorer.version;
  }
  return versions;
}

// Not a canonical JSON text (those never start with a space), so no case's own spec shares the default's key.
const DEFAULT_SPEC = ' default';

/** The spec's canonical JSON; null when it has none (then it is validated per case, never shared). */
function specKey(spec: unknown): string | null {
  try {
    return canonicalJson(spec);
  } catch {
    return null;
  }
}

/** Validates as compileSuite does (`{}` or `{ expected }`), observing whether the validator looked at the context at all. */
function validateTracked(spec: unknown, expected: unknown): { checked: ScorerSpecValidation; readCase: boolean } {
  let readCase = false;
  const read = () => {
    readCase = true;
  };
  const ctx = new Proxy<Record<string, unknown>>(expected === undefined ? {} : { expected }, {
    get: (t, p, r) => (read(), Reflect.get(t, p, r)),
    has: (t, p) => (read(), Reflect.has(t, p)),
    ownKeys: (t) => (read(), Reflect.ownKeys(t)),
    getOwnPropertyDescriptor: (t, p) => (read(), Reflect.getOwnPropertyDescriptor(t, p)),
  });
  const checked = validateScorerSpec(spec, ctx);
  return { checked, readCase };
}
