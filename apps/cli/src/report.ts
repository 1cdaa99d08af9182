import { wilson } from '@evals/stats';
import type { Comparison } from '@evals/domain';
import { formatDiff, formatRate, percent, type Styles, table } from './format';
import { isObject } from './http';
import type { LocalRun } from './local-evaluation';

/**
 * One verdict, whatever produced it (a gate answer, a run of `POST /v1/runs`, a local `evals score`), in
 * the shape the three renderers need: the terminal table (here), JUnit XML (junit.ts) and the Markdown
 * summary (markdown.ts). It holds case ids, scores and labels; it has no field for a candidate output (D1),
 * so no renderer can print one.
 */
export interface Note {
  readonly code: string;
  readonly message: string;
}

export interface Rate {
  readonly passed: number;
  readonly n: number;
  readonly lower: number;
  readonly upper: number;
}

export interface CaseLine {
  readonly case_id: string;
  /** null: listed but not scored (skipped in JUnit). */
  readonly passed: boolean | null;
  readonly score: number | null;
  readonly label: string;
  readonly scorer?: string;
}

export interface ComparisonLine {
  readonly verdict: string;
  readonly baseline_run_id: string | null;
  readonly chosen_by: string | null;
  readonly score_drop: number | null;
  readonly regression_threshold: number | null;
  readonly diff: { readonly diff: number | null; readonly lower: number; readonly upper: number } | null;
  readonly run: { readonly passed: number; readonly n: number } | null;
  readonly baseline: { readonly passed: number; readonly n: number } | null;
  /** What changed between the baseline and the run (G4), one human line each. */
  readonly changes: readonly string[];
  /** G7: which cases the comparison counted, when it left some out; and a chosen baseline that is not eligible (G4). */
  readonly coverage: string | null;
  /** G7: the paired difference when the same cases were scored in both runs, and whether it decided. */
  readonly paired: { readonly diff: number | null; readonly lower: number; readonly upper: number; readonly baseline_only: number; readonly run_only: number; readonly n: number } | null;
  /** G8: an inconclusive drop's cases per run needed to resolve it, and how many the comparison had. */
  readonly cases_needed: { readonly per_run: number; readonly have: number } | null;
  /** The baseline could not be used (e.g. BASELINE_NOT_FOUND). */
  readonly error: Note | null;
}

export interface EvalReport {
  readonly kind: 'run' | 'gate' | 'score';
  readonly suite_key: string;
  readonly suite_version: number | null;
  /** `kind/id`. */
  readonly subject: string | null;
  readonly variant: string | null;
  readonly run_id: string | null;
  readonly gate_id: string | null;
  /** For a gate, the effective verdict (GT5): what CI acts on. */
  readonly verdict: 'pass' | 'fail';
  readonly recorded_verdict: string | null;
  readonly reasons: readonly Note[];
  readonly warnings: readonly Note[];
  readonly rate: Rate | null;
  readonly score: number | null;
  readonly pass_threshold: number | null;
  readonly comparison: ComparisonLine | null;
  /** Further facts as label and value: judge, budget, sample, override. */
  readonly details: ReadonlyArray<readonly [string, string]>;
  /** null when the cases are not known (not fetched). */
  readonly cases: readonly CaseLine[] | null;
  readonly timestamp: string | null;
  readonly elapsed_seconds: number | null;
  /** GT7: a gate over several suites - each suite's own report, with its raw and Holm-adjusted p-value. */
  readonly family?: FamilyLine;
}

export interface FamilySuiteLine {
  readonly suite_key: string;
  /** The suite's verdict in the family (after Holm); `own_verdict` is its own gate's. */
  readonly verdict: 'pass' | 'fail';
  readonly own_verdict: string | null;
  readonly regression_p: { readonly raw: number; readonly adjusted: number } | null;
  readonly report: EvalReport;
}

export interface FamilyLine {
  readonly tests: number;
  readonly alpha: number;
  readonly suites: readonly FamilySuiteLine[];
}

// ---------------------------------------------------------------------------------------------------------
// Adapters

/** A gate answer (`POST /v1/gate`, `GET /v1/gate/:id`; docs/gate.md). Read defensively: unknown fields are ignored. */
export function fromGate(body: unknown, elapsedSeconds: number | null = null): EvalReport {
  const g = isObject(body) ? body : {};
  if (Array.isArray(g.suites)) return fromGateFamily(g, elapsedSeconds);
  const run = obj(g.run);
  const effective = str(g.effective_verdict);
  const recorded = str(g.recorded_verdict);
  const details: Array<[string, string]> = [];
  const judge = obj(g.judge);
  if (Object.keys(judge).length > 0) details.push(['judge', describeJudge(judge)]);
  details.push(...correctedDetails(judge.corrected_pass_rates));
  details.push(...stabilityDetails(judge.stability));
  const budget = obj(g.budget);
  if (str(budget.decision)) details.push(['budget', describeBudget(budget)]);
  const sample = obj(g.sample);
  if (num(sample.size) !== null) details.push(['sample', `${num(sample.size)} cases, seed ${str(sample.seed) ?? String(sample.seed ?? '')}`]);
  const override = obj(g.override);
  if (Object.keys(override).length > 0) details.push(['override', describeOverride(override)]);
  const n = num(run.n);
  const passed = num(run.passed);
  return {
    kind: 'gate',
    suite_key: str(run.suite_key) ?? str(g.suite_key) ?? 'unknown-suite',
    suite_version: num(run.suite_version),
    subject: str(run.subject_kind) && str(run.subject_id) ? `${str(run.subject_kind)}/${str(run.subject_id)}` : null,
    variant: str(run.variant),
    run_id: str(run.run_id),
    gate_id: str(g.gate_id),
    verdict: effective === 'pass' ? 'pass' : 'fail',
    recorded_verdict: recorded,
    reasons: notes(g.reasons).map((x) => worded(x, passed, n, num(run.pass_threshold), comparisonLine(g.comparison, null))),
    warnings: notes(g.warnings).map((x) => worded(x, passed, n, num(run.pass_threshold), comparisonLine(g.comparison, null))),
    rate: n !== null && passed !== null ? rateOf(passed, n, obj(run.pass_rate_ci)) : null,
    score: num(run.score),
    pass_threshold: num(run.pass_threshold),
    comparison: comparisonLine(g.comparison, null),
    details,
    cases: Array.isArray(g.cases) ? g.cases.map(caseLine) : null,
    timestamp: str(g.recorded_at),
    elapsed_seconds: elapsedSeconds,
  };
}

/** GT7: a gate over several suites. Each suite reads as a gate of its own, its verdict the family's for it. */
function fromGateFamily(g: Record<string, unknown>, elapsedSeconds: number | null): EvalReport {
  const family = obj(g.family);
  const subject = obj(g.subject);
  const effective = str(g.effective_verdict);
  const suites = (g.suites as unknown[]).map(obj).map((s): FamilySuiteLine => {
    const p = obj(s.regression_p);
    const [raw, adjusted] = [num(p.raw), num(p.adjusted)];
    const verdict = str(s.verdict) === 'pass' ? 'pass' : 'fail';
    const report = fromGate({ ...s, effective_verdict: verdict, recorded_verdict: verdict });
    return { suite_key: str(s.suite_key) ?? report.suite_key, verdict, own_verdict: str(s.suite_verdict), regression_p: raw !== null && adjusted !== null ? { raw, adjusted } : null, report };
  });
  const override = obj(g.override);
  return {
    kind: 'gate',
    suite_key: suites.map((s) => s.suite_key).join(', '),
    suite_version: null,
    subject: str(subject.kind) && str(subject.id) ? `${str(subject.kind)}/${str(subject.id)}` : null,
    variant: str(subject.variant),
    run_id: null,
    gate_id: str(g.gate_id),
    verdict: effective === 'pass' ? 'pass' : 'fail',
    recorded_verdict: str(g.recorded_verdict),
    reasons: notes(g.reasons),
    warnings: notes(g.warnings),
    rate: null,
    score: null,
    pass_threshold: null,
    comparison: null,
    details: Object.keys(override).length > 0 ? [['override', describeOverride(override)]] : [],
    cases: null,
    timestamp: str(g.recorded_at),
    elapsed_seconds: elapsedSeconds,
    family: { tests: num(family.tests) ?? 0, alpha: num(family.alpha) ?? 0.05, suites },
  };
}

/** "p 0.0494, Holm-adjusted 0.1482" - or why there is no test. */
export function familyPText(s: FamilySuiteLine): string {
  return s.regression_p ? `raw p ${formatP(s.regression_p.raw)}, Holm-adjusted p ${formatP(s.regression_p.adjusted)}` : 'no regression test (no baseline, or no drop above the threshold)';
}

export function formatP(p: number): string {
  return p < 0.0001 ? p.toExponential(2) : p.toFixed(4);
}

/** A completed run (`POST /v1/runs`, `GET /v1/runs/:id`): fails below the pass threshold (R2) or regressed (G2). */
export function fromRunView(body: unknown, cases: unknown = null, elapsedSeconds: number | null = null): EvalReport {
  const v = isObject(body) ? body : {};
  const run = obj(v.run);
  const summary = obj(run.summary);
  const regression = obj(v.regression);
  const reasons: Note[] = [];
  const warnings: Note[] = [];
  const threshold = num(run.pass_threshold);
  const n = num(summary.n) ?? 0;
  const passed = num(summary.passed) ?? 0;
  const verdict = str(regression.verdict);
  const comparison = comparisonLine(regression.comparison, regression);
  if (verdict === 'regressed') reasons.push({ code: 'regressed', message: regressedText(comparison) });
  if (summary.run_passed === false) reasons.push({ code: 'below_pass_threshold', message: belowThresholdText(passed, n, threshold) });
  if (verdict === 'inconclusive_noise') warnings.push({ code: 'inconclusive_noise', message: noiseText(comparison) });
  if (comparison?.error) warnings.push(comparison.error);
  const missing = num(run.missing_outputs);
  if (missing) warnings.push({ code: 'missing_outputs', message: `${missing} case(s) had no output and failed with missing_output (R1)` });
  const subjectKind = str(run.subject_kind);
  const subjectId = str(run.subject_id);
  const caseList = Array.isArray(cases) ? cases : isObject(v) && Array.isArray(v.cases) ? v.cases : null;
  return {
    kind: 'run',
    suite_key: str(run.suite_key) ?? 'unknown-suite',
    suite_version: num(run.suite_version),
    subject: subjectKind && subjectId ? `${subjectKind}/${subjectId}` : null,
    variant: str(run.variant),
    run_id: str(run.run_id),
    gate_id: null,
    verdict: reasons.length === 0 ? 'pass' : 'fail',
    recorded_verdict: null,
    reasons,
    warnings,
    rate: rateOf(passed, n, obj(summary.pass_rate_ci)),
    score: num(summary.score),
    pass_threshold: threshold,
    comparison,
    details: [...(verdict === 'no_baseline' ? [['baseline', 'none yet: the first completed run of this suite and subject (G4)'] as [string, string]] : []), ...correctedDetails(v.judge_corrected_pass_rates)],
    cases: caseList ? caseList.map(caseLine) : null,
    timestamp: str(run.completed_at),
    elapsed_seconds: elapsedSeconds,
  };
}

/** `evals score`: a run scored in this process, optionally compared with a local baseline. */
export function fromLocal(suiteKey: string, passThreshold: number, run: LocalRun, comparison: Comparison | undefined, elapsedSeconds: number | null = null): EvalReport {
  const reasons: Note[] = [];
  const line = comparison ? comparisonLine(comparison, null) : null;
  if (comparison?.verdict === 'regressed') reasons.push({ code: 'regressed', message: regressedText(line) });
  if (!run.run_passed) reasons.push({ code: 'below_pass_threshold', message: belowThresholdText(run.passed, run.n, passThreshold) });
  const warnings: Note[] = [];
  if (comparison?.verdict === 'inconclusive_noise') warnings.push({ code: 'inconclusive_noise', message: noiseText(line) });
  return {
    kind: 'score',
    suite_key: suiteKey,
    suite_version: null,
    subject: null,
    variant: null,
    run_id: null,
    gate_id: null,
    verdict: reasons.length === 0 ? 'pass' : 'fail',
    recorded_verdict: null,
    reasons,
    warnings,
    rate: { passed: run.passed, n: run.n, lower: run.interval.lower, upper: run.interval.upper },
    score: run.score,
    pass_threshold: passThreshold,
    comparison: comparison ? comparisonLine(comparison, null) : null,
    details: [],
    cases: run.cases.map((c) => ({ case_id: c.case_id, passed: c.passed, score: c.score, label: c.label, scorer: c.scorer })),
    timestamp: null,
    elapsed_seconds: elapsedSeconds,
  };
}

function comparisonLine(raw: unknown, regression: Record<string, unknown> | null): ComparisonLine | null {
  const c = obj(raw);
  const reg = regression ?? {};
  if (Object.keys(c).length === 0) return null;
  const error = obj(c.error);
  if (str(error.code)) {
    return { verdict: str(reg.verdict) ?? 'no_baseline', baseline_run_id: str(reg.baseline_run_id), chosen_by: null, score_drop: null, regression_threshold: null, diff: null, run: null, baseline: null, changes: [], coverage: null, paired: null, cases_needed: null, error: { code: str(error.code)!, message: str(error.message) ?? '' } };
  }
  const d = obj(c.pass_rate_diff);
  const lower = num(d.lower);
  const upper = num(d.upper);
  return {
    verdict: str(c.verdict) ?? str(reg.verdict) ?? 'unknown',
    baseline_run_id: str(c.baseline_run_id) ?? str(reg.baseline_run_id),
    chosen_by: str(c.chosen_by) ?? str(reg.chosen_by),
    score_drop: num(c.score_drop),
    regression_threshold: num(c.regression_threshold),
    diff: lower !== null && upper !== null ? { diff: num(d.diff), lower, upper } : null,
    run: counts(c.run),
    baseline: counts(c.baseline),
    changes: describeChanges(c.changes),
    coverage: describeCoverage(c),
    paired: pairedLine(c.paired_diff),
    cases_needed: casesNeededLine(c.cases_needed),
    error: null,
  };
}

function pairedLine(raw: unknown): ComparisonLine['paired'] {
  const p = obj(raw);
  const [lower, upper, baselineOnly, runOnly, n] = [num(p.lower), num(p.upper), num(p.baseline_only), num(p.run_only), num(p.n)];
  if (lower === null || upper === null || baselineOnly === null || runOnly === null || n === null) return null;
  return { diff: num(p.diff), lower, upper, baseline_only: baselineOnly, run_only: runOnly, n };
}

function casesNeededLine(raw: unknown): ComparisonLine['cases_needed'] {
  const c = obj(raw);
  const [perRun, have] = [num(c.per_run), num(c.have)];
  return perRun === null || have === null ? null : { per_run: perRun, have };
}

/** "compared on 11 of 12 cases (1 unscored in the run)", only when cases were left out; and an ineligible baseline. */
function describeCoverage(c: Record<string, unknown>): string | null {
  const cc = obj(c.compared_cases);
  const run = obj(cc.run);
  const base = obj(cc.baseline);
  const left = obj(cc.left_out);
  const parts: string[] = [];
  const [n, of, baseN, baseOf] = [num(run.n), num(run.of), num(base.n), num(base.of)];
  if (n !== null && of !== null && baseN !== null && baseOf !== null && (n < of || baseN < baseOf)) {
    const why = [
      [num(left.unscored_in_run), 'unscored in the run'],
      [num(left.unscored_in_baseline), 'unscored in the baseline'],
      [num(left.scored_in_one_run_only), 'scored in one run only'],
    ]
      .filter(([k]) => typeof k === 'number' && k > 0)
      .map(([k, text]) => `${k} ${text}`);
    const counted = n === baseN && of === baseOf ? `${n} of ${of} cases` : `${n} of ${of} cases (baseline ${baseN} of ${baseOf})`;
    parts.push(`compared on ${counted}${why.length > 0 ? `; left out: ${why.join(', ')}` : ''}`);
  }
  if (c.baseline_eligible === false) parts.push(`baseline not eligible as an automatic baseline (${str(c.baseline_ineligible_reason) ?? 'unknown'})`);
  return parts.length > 0 ? parts.join('; ') : null;
}

function describeChanges(raw: unknown): string[] {
  const c = obj(raw);
  const lines: string[] = [];
  const sv = obj(c.suite_version);
  if (num(sv.baseline) !== null) lines.push(`suite version ${num(sv.baseline)} -> ${num(sv.run)}`);
  if (Array.isArray(c.scorer_versions)) {
    for (const s of c.scorer_versions.map(obj)) lines.push(`scorer ${str(s.scorer)} ${str(s.baseline) ?? 'none'} -> ${str(s.run) ?? 'none'}`);
  }
  for (const key of ['judge_model', 'prompt_version'] as const) {
    const p = obj(c[key]);
    if ('baseline' in p || 'run' in p) lines.push(`${key.replace('_', ' ')} ${str(p.baseline) ?? 'none'} -> ${str(p.run) ?? 'none'}`);
  }
  return lines;
}

/**
 * J4/J9 (GT6): the judge-corrected pass rate per certified scope, with its interval and every denominator:
 * `judge-corrected pass rate: 78.6% (95% CI 41.2-100.0%) - judge passed 3/4, Se 45/50, Sp 40/50 (suite:support)`.
 */
export function correctedDetails(raw: unknown): Array<[string, string]> {
  if (!Array.isArray(raw)) return [];
  return raw.filter(isObject).map((r) => {
    const apparent = obj(r.apparent);
    const se = obj(r.sensitivity);
    const sp = obj(r.specificity);
    const rate = num(r.rate);
    const lower = num(r.lower) ?? 0;
    const upper = num(r.upper) ?? 1;
    const shown = rate === null ? `undefined (${str(r.reason) ?? 'n/a'})` : percent(rate);
    return [
      'judge-corrected pass rate',
      `${shown} (95% CI ${(lower * 100).toFixed(1)}-${(upper * 100).toFixed(1)}%) - judge passed ${num(apparent.passed) ?? '?'}/${num(apparent.n) ?? '?'}, Se ${num(se.x) ?? '?'}/${num(se.n) ?? '?'}, Sp ${num(sp.x) ?? '?'}/${num(sp.n) ?? '?'} (${str(r.scope) ?? 'scope unknown'}; Rogan-Gladen, Lang-Reiczigel interval)`,
    ];
  });
}

function describeJudge(j: Record<string, unknown>): string {
  if (j.used === false) return 'not used';
  const cache = obj(j.cache);
  const parts = [
    str(j.status),
    str(j.model) ? `model ${str(j.model)}` : undefined,
    str(j.prompt_version) ? `prompt ${str(j.prompt_version)}` : undefined,
    num(j.cases_not_scored) ? `${num(j.cases_not_scored)} case(s) not scored` : undefined,
    str(j.skipped) ? `judge skipped: ${str(j.skipped)}` : undefined,
    num(cache.hits) !== null ? `cache ${num(cache.hits)} hit(s) / ${num(cache.misses) ?? 0} miss(es)` : undefined,
  ];
  return parts.filter(Boolean).join(', ');
}

function describeOverride(o: Record<string, unknown>): string {
  const who = str(o.actor_name) ?? str(o.by) ?? str(o.who) ?? str(o.actor);
  const when = str(o.at) ?? str(o.when) ?? str(o.overridden_at);
  const before = str(o.before) ?? str(o.effective_verdict_before);
  const after = str(o.after) ?? str(o.effective_verdict_after);
  return [before && after ? `${before} -> ${after}` : undefined, who ? `by ${who}` : undefined, when ? `at ${when}` : undefined, str(o.reason) ? `reason: ${str(o.reason)}` : undefined].filter(Boolean).join(', ') || 'yes';
}

function caseLine(raw: unknown): CaseLine {
  const c = obj(raw);
  return {
    case_id: str(c.case_id) ?? '(no id)',
    passed: typeof c.passed === 'boolean' ? c.passed : null,
    score: num(c.score),
    label: str(c.label) ?? (c.passed === true ? 'passed' : 'failed'),
    ...(str(c.scorer) ? { scorer: str(c.scorer)! } : {}),
  };
}

function rateOf(passed: number, n: number, ci: Record<string, unknown>): Rate {
  const lower = num(ci.lower);
  const upper = num(ci.upper);
  if (lower !== null && upper !== null) return { passed, n, lower, upper };
  const w = wilson(passed, n);
  return { passed, n, lower: w.lower, upper: w.upper };
}

function counts(raw: unknown): { passed: number; n: number } | null {
  const o = obj(raw);
  const passed = num(o.passed);
  const n = num(o.n);
  return passed !== null && n !== null ? { passed, n } : null;
}

function notes(raw: unknown): Note[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((r) => (typeof r === 'string' ? { code: r, message: '' } : { code: str(obj(r).code) ?? 'unknown', message: str(obj(r).message) ?? '' }));
}

/**
 * Issue 13: the judge's verdict stability over the cases it judged with `repeats`, with its interval and the
 * unstable cases: `verdict stability: 66.7% (95% CI 30.0-90.3%) - 4/6 cases agree over 3 repeats; unstable: f2, f5`.
 */
export function stabilityDetails(raw: unknown): Array<[string, string]> {
  const s = obj(raw);
  const rate = num(s.rate);
  const cases = num(s.cases);
  if (rate === null || cases === null) return [];
  const pct = (v: number | null) => (v === null ? '?' : (v * 100).toFixed(1));
  const unstable = Array.isArray(s.unstable_case_ids) ? (s.unstable_case_ids as unknown[]).map(String) : [];
  const shown = unstable.slice(0, 10).join(', ') + (unstable.length > 10 ? ', ...' : '');
  return [
    [
      'verdict stability',
      `${pct(rate)}% (95% CI ${pct(num(s.lower))}-${pct(num(s.upper))}%) - ${num(s.stable) ?? '?'}/${cases} cases agree over ${num(s.repeats) ?? '?'} repeats${unstable.length > 0 ? `; unstable: ${shown}` : ''}`,
    ],
  ];
}

/** Issue 13: the budget decision with the estimate and what was left, when the gate weighed one: `throttled - estimate $0.0123, left $0.0050 (suite:support)`. */
export function describeBudget(budget: Record<string, unknown>): string {
  const decision = str(budget.decision) ?? 'unknown';
  const estimate = num(budget.estimate_usd);
  if (estimate === null) return decision;
  const left = num(budget.left_usd);
  const scope = str(budget.scope);
  return `${decision} - estimate $${estimate.toFixed(4)}${left === null ? '' : `, left $${left.toFixed(4)}`}${scope ? ` (${scope})` : ''}`;
}

function obj(v: unknown): Record<string, unknown> {
  return isObject(v) ? v : {};
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

// ---------------------------------------------------------------------------------------------------------
// Shared wording

/**
 * One wording per reason, whichever command produced the verdict (`run`, `gate`, `score`) and wherever it is
 * shown (the table, JUnit, the Markdown summary): the gate's own messages for these codes are replaced by
 * the same sentence `run` prints, built from the numbers of the answer. Other codes keep the service's text.
 */
function worded(note: Note, passed: number | null, n: number | null, threshold: number | null, comparison: ComparisonLine | null): Note {
  if (note.code === 'below_pass_threshold' && passed !== null && n !== null) return { code: note.code, message: belowThresholdText(passed, n, threshold) };
  // Only when the comparison itself says so: in a family (GT7) a suite's own `regressed` demoted by Holm is
  // an inconclusive_noise warning whose message - not significant after Holm - is the family's, kept as it is.
  if (note.code === 'regressed' && comparison?.verdict === 'regressed') return { code: note.code, message: regressedText(comparison) };
  if (note.code === 'inconclusive_noise' && comparison?.verdict === 'inconclusive_noise') return { code: note.code, message: noiseText(comparison) };
  return note;
}

/** `pass rate 46.7% (14/30) is below the pass threshold 75% (R2)`. */
export function belowThresholdText(passed: number, n: number, threshold: number | null): string {
  const rate = n > 0 ? `${percent(passed / n)} (${passed}/${n})` : `n/a (0/0)`;
  return `pass rate ${rate} is below the pass threshold${threshold !== null ? ` ${thresholdText(threshold)}` : ''} (R2)`;
}

/** `the score dropped 0.120 against baseline ci-0, more than the regression threshold 0.1, and the 95% interval of the pass-rate difference excludes zero (G2)`. */
export function regressedText(c: ComparisonLine | null): string {
  return `${dropText(c)}, and the 95% interval of the pass-rate difference excludes zero (G2)`;
}

/** The same facts when the interval contains zero: a warning, never a reason. */
export function noiseText(c: ComparisonLine | null): string {
  return `${dropText(c)}, but the 95% interval of the pass-rate difference contains zero: not a regression (G2)`;
}

function dropText(c: ComparisonLine | null): string {
  const drop = c?.score_drop !== null && c?.score_drop !== undefined ? ` ${c.score_drop.toFixed(3)}` : '';
  const against = c?.baseline_run_id ? ` against baseline ${c.baseline_run_id}` : '';
  const threshold = c?.regression_threshold !== null && c?.regression_threshold !== undefined ? ` ${c.regression_threshold}` : '';
  return `the score dropped${drop}${against}, more than the regression threshold${threshold}`;
}

/** A threshold as a percentage: 0.75 -> `75%`, 0.755 -> `75.5%`. */
export function thresholdText(threshold: number): string {
  return `${Number((threshold * 100).toFixed(1))}%`;
}

export function rateText(r: Rate): string {
  return formatRate(r.passed, r.n, r.lower, r.upper);
}

/** The baseline's pass rate with its Wilson interval, computed from the counts the comparison carries (G3). */
export function baselineRate(c: ComparisonLine): Rate | null {
  if (!c.baseline) return null;
  const w = wilson(c.baseline.passed, c.baseline.n);
  return { passed: c.baseline.passed, n: c.baseline.n, lower: w.lower, upper: w.upper };
}

export function comparisonText(c: ComparisonLine): string {
  if (c.error) return `baseline not usable: ${c.error.code}${c.error.message ? ` (${c.error.message})` : ''}`;
  const parts: string[] = [];
  if (c.score_drop !== null) parts.push(`score drop ${c.score_drop.toFixed(3)}${c.regression_threshold !== null ? ` (threshold ${c.regression_threshold})` : ''}`);
  if (c.diff) parts.push(`pass-rate difference ${formatDiff(c.diff.diff, c.diff.lower, c.diff.upper)}, Newcombe hybrid score`);
  if (c.run && c.baseline) parts.push(`run ${c.run.passed}/${c.run.n} vs baseline ${c.baseline.passed}/${c.baseline.n}`);
  if (c.paired) {
    const p = c.paired;
    parts.push(`paired on the same ${p.n} cases: ${formatDiff(p.diff, p.lower, p.upper)} (${p.baseline_only} passed in the baseline only, ${p.run_only} in the run only), Newcombe paired method 10 - this decided`);
  }
  if (c.cases_needed) parts.push(`inconclusive: ${c.cases_needed.per_run} cases per run would resolve a drop of this size (95% confidence, 80% power); this comparison has ${c.cases_needed.have}`);
  if (c.coverage) parts.push(c.coverage);
  return parts.join('; ');
}

export function verdictWord(verdict: string): string {
  return verdict === 'regressed' ? 'REGRESSED' : verdict === 'inconclusive_noise' ? 'inconclusive (noise)' : verdict === 'no_regression' ? 'no regression' : verdict.replace(/_/g, ' ');
}

export function failingCases(report: EvalReport): CaseLine[] {
  return (report.cases ?? []).filter((c) => c.passed === false);
}

// ---------------------------------------------------------------------------------------------------------
// Terminal

export function renderReport(r: EvalReport, s: Styles): string {
  if (r.family) return renderFamily(r, r.family, s);
  const verdict = r.verdict === 'pass' ? s.green('PASS') : s.red('FAIL');
  return [...renderBody(r, s), `verdict: ${verdict}`].join('\n');
}

/** GT7: each suite's section (as a gate of its own, with its raw and adjusted p), then the family's verdict. */
function renderFamily(r: EvalReport, f: FamilyLine, s: Styles): string {
  const verdict = r.verdict === 'pass' ? s.green('PASS') : s.red('FAIL');
  const lines: string[] = [];
  lines.push(s.bold(`gate ${r.gate_id ?? ''}: `) + verdict + s.bold(` (family of ${f.suites.length} suites)`) + (r.recorded_verdict && r.recorded_verdict !== r.verdict ? s.yellow(` (recorded ${r.recorded_verdict}, overridden)`) : ''));
  lines.push(s.dim([r.subject, r.variant ? `variant ${r.variant}` : null, `Holm over ${f.tests} regression test(s), family-wise alpha ${f.alpha}`].filter(Boolean).join(' | ')));
  for (const suite of f.suites) {
    lines.push('');
    lines.push(s.bold(`== suite ${suite.suite_key}`) + (suite.own_verdict && suite.own_verdict !== suite.verdict ? s.yellow(` (its own gate: ${suite.own_verdict}; in the family: ${suite.verdict})`) : ''));
    lines.push(...renderBody(suite.report, s));
    lines.push(`regression p: ${familyPText(suite)}`);
  }
  lines.push('');
  const rows = [['suite', 'verdict', 'regression', 'raw p', 'adjusted p'], ...f.suites.map((x) => [x.suite_key, x.verdict === 'pass' ? 'PASS' : 'FAIL', x.report.comparison ? verdictWord(x.report.comparison.verdict) : 'no baseline', x.regression_p ? formatP(x.regression_p.raw) : '-', x.regression_p ? formatP(x.regression_p.adjusted) : '-'])];
  lines.push(table(rows));
  for (const [label, value] of r.details) lines.push(`${label}: ${value}`);
  lines.push(`verdict: ${verdict}`);
  return lines.join('\n');
}

/** The reasons and warnings, one line each, as every command prints them. */
export function renderNotes(r: Pick<EvalReport, 'reasons' | 'warnings'>, s: Styles): string[] {
  const lines: string[] = [];
  if (r.reasons.length > 0) {
    lines.push(s.red('reasons:'));
    for (const x of r.reasons) lines.push(`  - ${x.code}${x.message ? `: ${x.message}` : ''}`);
  }
  if (r.warnings.length > 0) {
    lines.push(s.yellow('warnings:'));
    for (const x of r.warnings) lines.push(`  - ${x.code}${x.message ? `: ${x.message}` : ''}`);
  }
  return lines;
}

function renderBody(r: EvalReport, s: Styles): string[] {
  const lines: string[] = [];
  const title = r.kind === 'gate' ? `gate ${r.gate_id ?? ''}`.trim() : r.kind === 'run' ? `run ${r.run_id ?? ''}`.trim() : `suite ${r.suite_key}`;
  const verdict = r.verdict === 'pass' ? s.green('PASS') : s.red('FAIL');
  lines.push(s.bold(`${title}: `) + verdict + (r.recorded_verdict && r.recorded_verdict !== r.verdict ? s.yellow(` (recorded ${r.recorded_verdict}, overridden)`) : ''));
  const where = [
    `suite ${r.suite_key}${r.suite_version !== null ? ` v${r.suite_version}` : ''}`,
    r.subject,
    r.variant ? `variant ${r.variant}` : null,
    r.kind === 'gate' && r.run_id ? `run ${r.run_id}` : null,
  ].filter(Boolean);
  lines.push(s.dim(where.join(' | ')));
  lines.push('');
  const rows: string[][] = [['', 'pass rate', 'mean score', r.pass_threshold !== null ? `pass threshold ${thresholdText(r.pass_threshold)}` : '']];
  const base = r.comparison ? baselineRate(r.comparison) : null;
  if (base) rows.push([`baseline ${r.comparison?.baseline_run_id ?? ''}`.trim(), rateText(base), '', '']);
  if (r.rate) {
    const below = r.reasons.some((x) => x.code === 'below_pass_threshold');
    rows.push(['run', rateText(r.rate), r.score !== null ? r.score.toFixed(3) : 'n/a', r.pass_threshold === null ? '' : below ? s.red('below threshold') : s.green('at or above')]);
  }
  lines.push(table(rows));
  if (r.comparison) {
    const c = r.comparison;
    const word = c.verdict === 'regressed' ? s.red(verdictWord(c.verdict)) : c.verdict === 'inconclusive_noise' ? s.yellow(verdictWord(c.verdict)) : s.green(verdictWord(c.verdict));
    lines.push('');
    lines.push(`regression: ${word}${c.baseline_run_id ? ` against ${c.baseline_run_id}` : ''}${c.chosen_by ? ` (${c.chosen_by})` : ''}`);
    const text = comparisonText(c);
    if (text) lines.push(`  ${text}`);
    if (c.changes.length > 0) lines.push(`  changed since the baseline: ${c.changes.join('; ')}`);
  }
  for (const [label, value] of r.details) lines.push(`${label}: ${value}`);
  lines.push(...renderNotes(r, s));
  const failing = failingCases(r);
  if (failing.length > 0) {
    const shown = failing.slice(0, 20).map((c) => `${c.case_id} (${c.label})`);
    lines.push(s.dim(`failing cases (${failing.length} of ${r.cases!.length}): ${shown.join(', ')}${failing.length > shown.length ? ', ...' : ''}`));
  }
  return lines;
}
