import { baselineRate, comparisonText, failingCases, formatP, rateText, thresholdText, verdictWord, type EvalReport, type FamilyLine } from './report';

/**
 * A Markdown summary for CI job summaries (`--summary "$GITHUB_STEP_SUMMARY"`; docs/cli.md): the verdict,
 * its reasons and warnings, the rates with their denominators and 95% intervals (GT6), the comparison. It
 * is link-free - no Markdown links but the run's dashboard page when EVALS_PUBLIC_URL is set, no HTML - and
 * text from the server is escaped so that nothing in it becomes markup or an autolink. No candidate output appears (the report has none).
 */
const MAX_FAILING_LISTED = 50;

export interface MarkdownOptions {
  /**
   * The dashboard's public address (EVALS_PUBLIC_URL, docs/dashboard.md): when set, the one link of the
   * summary - to the run's page - is built from it; never from anything the server answered.
   */
  readonly dashboardUrl?: string;
}

/** `<address>/runs/<run id>` for an http(s) address; null for none or anything else. */
export function dashboardRunUrl(address: string | undefined, runId: string): string | null {
  if (!address) return null;
  let base: URL;
  try {
    base = new URL(address);
  } catch {
    return null;
  }
  if ((base.protocol !== 'http:' && base.protocol !== 'https:') || base.username || base.password) return null;
  const href = `${base.origin}${base.pathname.replace(/\/+$/, '')}/runs/${encodeURIComponent(runId)}`;
  // Brackets and parentheses would end the Markdown link early.
  return href.replace(/[()[\]<> ]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

export function renderMarkdown(r: EvalReport, options: MarkdownOptions = {}): string {
  if (r.family) return renderFamilyMarkdown(r, r.family);
  const title = r.kind === 'gate' ? 'evals gate' : r.kind === 'run' ? 'evals run' : 'evals score';
  const out: string[] = [];
  out.push(`## ${title}: ${r.verdict === 'pass' ? 'PASS' : 'FAIL'}`);
  out.push('');
  const facts = [
    `**Suite** ${code(r.suite_key)}${r.suite_version !== null ? ` v${r.suite_version}` : ''}`,
    r.subject ? `**Subject** ${code(r.subject)}` : null,
    r.variant ? `**Variant** ${code(r.variant)}` : null,
    r.run_id ? `**Run** ${code(r.run_id)}` : null,
    r.gate_id ? `**Gate** ${code(r.gate_id)}` : null,
  ].filter(Boolean);
  out.push(facts.join(' · '));
  const page = r.run_id ? dashboardRunUrl(options.dashboardUrl, r.run_id) : null;
  if (page) {
    out.push('');
    out.push(`[Open run ${escape(r.run_id!)} in the dashboard](${page})`);
  }
  if (r.recorded_verdict && r.recorded_verdict !== r.verdict) {
    out.push('');
    out.push(`Effective verdict **${r.verdict}**; recorded verdict **${escape(r.recorded_verdict)}** (overridden, GT5).`);
  }
  out.push('');
  out.push('| | pass rate (95% CI) | mean score | pass threshold |');
  out.push('|---|---|---|---|');
  const base = r.comparison ? baselineRate(r.comparison) : null;
  if (base) out.push(`| baseline ${cell(r.comparison?.baseline_run_id ?? '')} | ${rateText(base)} | | |`);
  if (r.rate) {
    out.push(`| run | ${rateText(r.rate)} | ${r.score !== null ? r.score.toFixed(3) : 'n/a'} | ${r.pass_threshold !== null ? thresholdText(r.pass_threshold) : ''} |`);
  }
  if (r.reasons.length > 0) {
    out.push('');
    out.push('**Reasons**');
    out.push('');
    for (const x of r.reasons) out.push(`- ${code(x.code)}${x.message ? `: ${escape(x.message)}` : ''}`);
  }
  if (r.warnings.length > 0) {
    out.push('');
    out.push('**Warnings**');
    out.push('');
    for (const x of r.warnings) out.push(`- ${code(x.code)}${x.message ? `: ${escape(x.message)}` : ''}`);
  }
  if (r.comparison) {
    const c = r.comparison;
    out.push('');
    out.push(
      `**Comparison**: ${escape(verdictWord(c.verdict))}${c.baseline_run_id ? ` against ${code(c.baseline_run_id)}` : ''}${c.chosen_by ? ` (${escape(c.chosen_by)})` : ''}. ${escape(capitalize(comparisonText(c)))}`.trimEnd(),
    );
    if (c.changes.length > 0) out.push(`Changed since the baseline: ${c.changes.map(escape).join('; ')}.`);
  }
  if (r.details.length > 0) {
    out.push('');
    for (const [label, value] of r.details) out.push(`- **${escape(label)}**: ${escape(value)}`);
  }
  const failing = failingCases(r);
  if (failing.length > 0) {
    out.push('');
    out.push(`**Failing cases** (${failing.length} of ${r.cases!.length})`);
    out.push('');
    const shown = failing.slice(0, MAX_FAILING_LISTED);
    out.push(shown.map((c) => `${code(c.case_id)} ${escape(c.label)}`).join(', ') + (failing.length > shown.length ? `, and ${failing.length - shown.length} more` : ''));
  }
  out.push('');
  return out.join('\n');
}

/** GT7: the family's verdict and one table row per suite, with its raw and Holm-adjusted p-values. */
function renderFamilyMarkdown(r: EvalReport, f: FamilyLine): string {
  const out: string[] = [];
  out.push(`## evals gate: ${r.verdict === 'pass' ? 'PASS' : 'FAIL'} (${f.suites.length} suites, Holm)`);
  out.push('');
  out.push([r.subject ? `**Subject** ${code(r.subject)}` : null, r.variant ? `**Variant** ${code(r.variant)}` : null, r.gate_id ? `**Gate** ${code(r.gate_id)}` : null].filter(Boolean).join(' · '));
  if (r.recorded_verdict && r.recorded_verdict !== r.verdict) {
    out.push('');
    out.push(`Effective verdict **${r.verdict}**; recorded verdict **${escape(r.recorded_verdict)}** (overridden, GT5).`);
  }
  out.push('');
  out.push(`Family-wise error of ${f.tests} regression test(s) held at ${f.alpha} by Holm's step-down method (GT7).`);
  out.push('');
  out.push('| suite | verdict | pass rate (95% CI) | regression | raw p | Holm-adjusted p | suite gate |');
  out.push('|---|---|---|---|---|---|---|');
  for (const s of f.suites) {
    const c = s.report.comparison;
    const own = s.own_verdict && s.own_verdict !== s.verdict ? ` (own gate: ${escape(s.own_verdict)})` : '';
    out.push(
      `| ${code(s.suite_key)} | ${s.verdict === 'pass' ? 'PASS' : 'FAIL'}${own} | ${s.report.rate ? rateText(s.report.rate) : ''} | ${c ? escape(verdictWord(c.verdict)) : 'no baseline'} | ${s.regression_p ? formatP(s.regression_p.raw) : '-'} | ${s.regression_p ? formatP(s.regression_p.adjusted) : '-'} | ${cell(s.report.gate_id ?? '')} |`,
    );
  }
  for (const [title, list] of [['Reasons', r.reasons], ['Warnings', r.warnings]] as const) {
    if (list.length === 0) continue;
    out.push('');
    out.push(`**${title}**`);
    out.push('');
    for (const x of list) out.push(`- ${code(x.code)}${x.message ? `: ${escape(x.message)}` : ''}`);
  }
  if (r.details.length > 0) {
    out.push('');
    for (const [label, value] of r.details) out.push(`- **${escape(label)}**: ${escape(value)}`);
  }
  out.push('');
  return out.join('\n');
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Escapes Markdown and HTML metacharacters, and breaks anything an autolinker would turn into a link. */
export function escape(s: string): string {
  return delink(
    s
      .replace(/[\r\n]+/g, ' ')
      .replace(/([\\`*_[\]|~])/g, '\\$1')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;'),
  );
}

/**
 * Inline code for ids and codes (never autolinked inside a code span); anything that could end the span or a
 * table cell (a backtick, a pipe, a line break - never in a valid id) falls back to escaped text.
 */
function code(s: string): string {
  return /[`|\r\n]/.test(s) ? escape(s) : `\`${s}\``;
}

function cell(s: string): string {
  return s ? code(s) : '';
}

/** A zero-width space after the scheme or `www` keeps GitHub's autolinker (and others) from linking. */
function delink(s: string): string {
  return s.replace(/:\/\//g, ':\u200b//').replace(/\bwww\./gi, (m) => `${m.slice(0, 3)}\u200b.`).replace(/@/g, '@\u200b');
}
