import type { Comparison } from '@evals/domain';
import { formatDiff, formatRate, table, type Styles } from './format';
import type { LocalRun } from './local-evaluation';
import { thresholdText } from './report';

/** The terminal report of `evals score` and `evals demo`: runs scored in this process (local-evaluation.ts). */
export function localSummary(run: LocalRun) {
  return { n: run.n, passed: run.passed, pass_rate: run.n ? run.passed / run.n : null, pass_rate_ci: { ...run.interval, level: 0.95 }, score: run.score, passed_threshold: run.run_passed };
}

export function localReport(key: string, threshold: number, run: LocalRun, baseline: LocalRun | undefined, c: Comparison | undefined, s: Styles): string {
  const lines = [s.bold(`suite ${key}`)];
  const rows: string[][] = [['run', 'pass rate', 'mean score', `pass threshold ${thresholdText(threshold)}`]];
  for (const r of [baseline, run].filter((x): x is LocalRun => x !== undefined)) {
    rows.push([r.label, formatRate(r.passed, r.n, r.interval.lower, r.interval.upper), r.score.toFixed(3), r.run_passed ? s.green('pass') : s.red('below threshold')]);
  }
  lines.push(table(rows));
  const failing = run.cases.filter((x) => !x.passed);
  if (failing.length > 0) {
    const shown = failing.slice(0, 20).map((x) => `${x.case_id} (${x.label})`);
    lines.push(s.dim(`failing cases: ${shown.join(', ')}${failing.length > shown.length ? `, and ${failing.length - shown.length} more` : ''}`));
  }
  if (c) {
    const verdict = c.verdict === 'regressed' ? s.red('REGRESSED') : c.verdict === 'inconclusive_noise' ? s.yellow('inconclusive (noise)') : s.green('no regression');
    lines.push(`score drop ${c.score_drop.toFixed(3)} (threshold ${c.regression_threshold}); pass-rate difference ${formatDiff(c.pass_rate_diff.diff, c.pass_rate_diff.lower, c.pass_rate_diff.upper)}, Newcombe hybrid score`);
    lines.push(`verdict: ${verdict}`);
  }
  return lines.join('\n');
}
