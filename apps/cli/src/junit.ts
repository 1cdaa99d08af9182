import { comparisonText, failingCases, familyPText, formatP, rateText, type CaseLine, type EvalReport, type FamilyLine } from './report';

/**
 * JUnit XML for CI test reporters (X5; docs/cli.md, "JUnit XML"). One `<testsuite>` per suite, one
 * `<testcase>` per case: `classname` the suite key, `name` the case id. A case that failed its scorer is a
 * `<failure message="LABEL">`; a case the scoring machinery could not decide (a scorer or judge error, a
 * judge that is not configured or not calibrated, a judge call the budget blocked) is an `<error message="LABEL">`; a case listed without a result is
 * `<skipped/>`. Properties carry the run id, the verdict and the rates. Candidate outputs never appear: the
 * report has no field for them.
 */
const ERROR_LABELS = /^(scorer_error|budget_blocked|judge_(?!pass$|fail$|below_min_score$)[a-z_]+)$/;

export function caseOutcome(c: CaseLine): 'passed' | 'failure' | 'error' | 'skipped' {
  if (c.passed === null) return 'skipped';
  if (c.passed) return 'passed';
  return ERROR_LABELS.test(c.label) ? 'error' : 'failure';
}

export function renderJunit(r: EvalReport): string {
  if (r.family) return renderFamilyJunit(r, r.family);
  const cases = r.cases ?? [];
  const outcomes = cases.map(caseOutcome);
  const count = (k: string) => outcomes.filter((o) => o === k).length;
  const time = seconds(r.elapsed_seconds);
  const suiteAttrs: Array<[string, string | number]> = [
    ['name', r.suite_key],
    ['tests', cases.length],
    ['failures', count('failure')],
    ['errors', count('error')],
    ['skipped', count('skipped')],
    ['time', time],
  ];
  const ts = junitTimestamp(r.timestamp);
  if (ts) suiteAttrs.push(['timestamp', ts]);
  const props: Array<[string, string]> = [];
  const add = (name: string, value: string | number | null | undefined) => {
    if (value !== null && value !== undefined && value !== '') props.push([name, String(value)]);
  };
  add('kind', r.kind);
  add('verdict', r.verdict);
  add('recorded_verdict', r.recorded_verdict);
  add('gate_id', r.gate_id);
  add('run_id', r.run_id);
  add('suite_key', r.suite_key);
  add('suite_version', r.suite_version);
  add('subject', r.subject);
  add('variant', r.variant);
  if (r.rate) add('pass_rate', rateText(r.rate));
  add('mean_score', r.score !== null ? r.score.toFixed(6) : null);
  add('pass_threshold', r.pass_threshold);
  if (r.comparison) {
    add('regression_verdict', r.comparison.verdict);
    add('baseline_run_id', r.comparison.baseline_run_id);
    // Both intervals, the discordant pairs, which decided, and an inconclusive drop's cases needed (G7, G8).
    add('comparison', comparisonText(r.comparison));
    if (r.comparison.paired) {
      const p = r.comparison.paired;
      add('paired_diff', `${p.diff ?? ''} [${p.lower}, ${p.upper}] baseline_only=${p.baseline_only} run_only=${p.run_only} n=${p.n}`);
    }
    if (r.comparison.cases_needed) add('cases_needed_per_run', r.comparison.cases_needed.per_run);
  }
  r.reasons.forEach((x, i) => add(`reason.${i + 1}`, x.message ? `${x.code}: ${x.message}` : x.code));
  r.warnings.forEach((x, i) => add(`warning.${i + 1}`, x.message ? `${x.code}: ${x.message}` : x.code));

  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites${attrs([['name', `evals ${r.kind}`], ['tests', cases.length], ['failures', count('failure')], ['errors', count('error')], ['skipped', count('skipped')], ['time', time]])}>`);
  out.push(`  <testsuite${attrs(suiteAttrs)}>`);
  out.push('    <properties>');
  for (const [name, value] of props) out.push(`      <property${attrs([['name', name], ['value', value]])}/>`);
  out.push('    </properties>');
  cases.forEach((c, i) => {
    const head = `    <testcase${attrs([['classname', r.suite_key], ['name', c.case_id], ['time', '0']])}`;
    const detail = `case ${c.case_id}: ${c.label}${c.score !== null ? `, score ${c.score}` : ''}${c.scorer ? `, scorer ${c.scorer}` : ''}`;
    switch (outcomes[i]) {
      case 'passed':
        out.push(`${head}/>`);
        break;
      case 'skipped':
        out.push(`${head}>`, `      <skipped${attrs([['message', c.label]])}/>`, '    </testcase>');
        break;
      case 'failure':
        out.push(`${head}>`, `      <failure${attrs([['message', c.label], ['type', c.label]])}>${text(detail)}</failure>`, '    </testcase>');
        break;
      case 'error':
        out.push(`${head}>`, `      <error${attrs([['message', c.label], ['type', c.label]])}>${text(detail)}</error>`, '    </testcase>');
        break;
    }
  });
  if (cases.length === 0 && r.verdict === 'fail') {
    // No per-case results (e.g. a gate refused before scoring): one synthetic case keeps CI red.
    out.push(`    <testcase${attrs([['classname', r.suite_key], ['name', 'verdict'], ['time', '0']])}>`);
    out.push(`      <failure${attrs([['message', r.reasons.map((x) => x.code).join(', ') || 'fail'], ['type', 'verdict']])}/>`);
    out.push('    </testcase>');
  }
  out.push(`    <system-out>${text(systemOut(r))}</system-out>`);
  out.push('  </testsuite>');
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}

/**
 * GT7: a gate over several suites is one `<testsuite>` with one `<testcase>` per suite (classname
 * `evals.gate.family`, name the suite key), failed when the suite fails in the family; the raw and
 * Holm-adjusted p-values are properties of the suite and lines of each testcase's output.
 */
function renderFamilyJunit(r: EvalReport, f: FamilyLine): string {
  const failures = f.suites.filter((s) => s.verdict === 'fail').length;
  const time = seconds(r.elapsed_seconds);
  const head: Array<[string, string | number]> = [['tests', f.suites.length], ['failures', failures], ['errors', 0], ['skipped', 0], ['time', time]];
  const ts = junitTimestamp(r.timestamp);
  const props: Array<[string, string]> = [
    ['kind', 'gate_family'],
    ['verdict', r.verdict],
    ...(r.recorded_verdict ? [['recorded_verdict', r.recorded_verdict] as [string, string]] : []),
    ...(r.gate_id ? [['gate_id', r.gate_id] as [string, string]] : []),
    ...(r.subject ? [['subject', r.subject] as [string, string]] : []),
    ['family.method', 'holm'],
    ['family.tests', String(f.tests)],
    ['family.alpha', String(f.alpha)],
  ];
  for (const s of f.suites) {
    props.push([`suite.${s.suite_key}.gate_id`, s.report.gate_id ?? ''], [`suite.${s.suite_key}.verdict`, s.verdict]);
    if (s.regression_p) props.push([`suite.${s.suite_key}.raw_p`, formatP(s.regression_p.raw)], [`suite.${s.suite_key}.adjusted_p`, formatP(s.regression_p.adjusted)]);
  }
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites${attrs([['name', 'evals gate'], ...head])}>`);
  out.push(`  <testsuite${attrs([['name', 'evals gate family'], ...head, ...(ts ? [['timestamp', ts] as [string, string]] : [])])}>`);
  out.push('    <properties>');
  for (const [name, value] of props) if (value !== '') out.push(`      <property${attrs([['name', name], ['value', value]])}/>`);
  out.push('    </properties>');
  for (const s of f.suites) {
    out.push(`    <testcase${attrs([['classname', 'evals.gate.family'], ['name', s.suite_key], ['time', '0']])}>`);
    if (s.verdict === 'fail') out.push(`      <failure${attrs([['message', s.report.reasons.map((x) => x.code).join(', ') || 'fail'], ['type', 'verdict']])}/>`);
    out.push(`      <system-out>${text([`regression p: ${familyPText(s)}`, systemOut(s.report)].join('\n'))}</system-out>`);
    out.push('    </testcase>');
  }
  out.push(`    <system-out>${text(systemOut(r))}</system-out>`);
  out.push('  </testsuite>');
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}

function systemOut(r: EvalReport): string {
  const lines = [`verdict: ${r.verdict}`];
  if (r.rate) lines.push(`pass rate: ${rateText(r.rate)}`);
  for (const x of r.reasons) lines.push(`reason: ${x.code}${x.message ? ` - ${x.message}` : ''}`);
  for (const x of r.warnings) lines.push(`warning: ${x.code}${x.message ? ` - ${x.message}` : ''}`);
  const failing = failingCases(r).length;
  if (r.cases) lines.push(`failing cases: ${failing} of ${r.cases.length}`);
  return lines.join('\n');
}

function seconds(s: number | null): string {
  return s === null || !Number.isFinite(s) || s < 0 ? '0' : s.toFixed(3);
}

/** JUnit's schema wants a local ISO 8601 timestamp without zone: `2026-11-30T10:00:00`. */
function junitTimestamp(iso: string | null): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().slice(0, 19);
}

function attrs(list: ReadonlyArray<readonly [string, string | number]>): string {
  return list.map(([k, v]) => ` ${k}="${attr(String(v))}"`).join('');
}

/** Characters XML 1.0 cannot carry at all (control characters, lone surrogates, U+FFFE/U+FFFF) are dropped. */
// eslint-disable-next-line no-control-regex
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function text(s: string): string {
  return s.replace(INVALID_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function attr(s: string): string {
  return text(s).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}
