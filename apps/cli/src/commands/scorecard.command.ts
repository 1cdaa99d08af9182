import { integerOption, oneOf, parseOptions, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { formatRate, table } from '../format';
import { clientFor, isObject, url } from '../http';
import { correctedDetails } from '../report';
import { suiteKeyOf } from '../suite-arg';

/**
 * `evals scorecard` (SC1, GT6): the scorecards of the read model (`GET /v1/scorecards`), as a table, the
 * service's CSV (RFC 4180, stable columns - docs/scorecards.md) or its JSON.
 */
export const scorecardCommand: Command = {
  name: 'scorecard',
  service: true,
  summary: 'Scorecards per suite and subject: pass rate with CI, mean score, trend (table, CSV or JSON).',
  usage: 'evals scorecard [--suite KEY|FILE] [--subject-kind KIND] [--subject-id ID] [--window N] [--format table|csv|json] [--json]',
  options: [
    '--suite KEY|FILE         only this suite (a suite file stands for its key)',
    '--subject-kind KIND      only this subject kind',
    '--subject-id ID          only this subject',
    '--window N               runs the trend spans (2 to 1000; default 10)',
    '--format F               table (default), csv (the service CSV as is) or json',
    '--json                   same as --format json',
    ...SERVER_OPTION_HELP,
  ],
  example: 'evals scorecard --suite support-triage --format csv > scorecards.csv',
  async run(args, io) {
    const { values } = parseOptions(args, {
      suite: { type: 'string' },
      'subject-kind': { type: 'string' },
      'subject-id': { type: 'string' },
      window: { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean' },
      ...SERVER_OPTIONS,
    });
    const format = values.json ? 'json' : oneOf(values.format, '--format', ['table', 'csv', 'json'] as const, 'table');
    const window = integerOption(values.window, '--window', 2, 1000);
    const client = clientFor(values, io, 60);
    const query = { suite_key: suiteKeyOf(values.suite, io.cwd), subject_kind: values['subject-kind'], subject_id: values['subject-id'], window, format: format === 'csv' ? 'csv' : 'json' };
    const route = url(client.endpoints.read, '/v1/scorecards', query);
    if (format === 'csv') {
      const answer = await client.get(route, { expect: 'text' as const });
      io.out(answer.body.replace(/\r?\n$/, ''));
      return EXIT.PASS;
    }
    const answer = await client.get(route);
    if (format === 'json') {
      io.out(JSON.stringify(answer.body, null, 2));
      return EXIT.PASS;
    }
    const cards = isObject(answer.body) && Array.isArray(answer.body.scorecards) ? answer.body.scorecards.filter(isObject) : [];
    if (cards.length === 0) {
      io.out('no scorecards: no completed runs match');
      return EXIT.PASS;
    }
    const rows = [['suite', 'subject', 'runs', 'latest pass rate', 'overall pass rate', 'mean score', 'trend', 'latest verdict']];
    for (const c of cards) {
      const trend: Partial<typeof c.trend> = isObject(c.trend) ? c.trend : {};
      const slope = typeof trend.slope_per_run === 'number' ? ` (${trend.slope_per_run >= 0 ? '+' : ''}${(trend.slope_per_run * 100).toFixed(1)} pp/run)` : '';
      rows.push([
        String(c.suite_key),
        `${String(c.subject_kind)}/${String(c.subject_id)}`,
        String(c.runs),
        rate(c.latest_pass_rate),
        rate(c.overall_pass_rate),
        typeof c.mean_score === 'number' ? c.mean_score.toFixed(3) : 'n/a',
        `${String(trend.direction ?? 'n/a')}${trend.direction === 'insufficient_data' ? '' : slope}`,
        String(c.latest_verdict ?? ''),
      ]);
    }
    io.out(table(rows));
    // J4/J9 (GT6): a judged suite's corrected rate is a rate like any other - shown with its interval and
    // every denominator (apparent passes, Se and Sp of the calibration set), never as a bare point.
    for (const c of cards) {
      for (const [label, text] of correctedDetails(c.latest_judge_corrected_pass_rates)) {
        io.out(`${label}, ${String(c.suite_key)} ${String(c.subject_kind)}/${String(c.subject_id)} (latest run): ${text}`);
      }
    }
    return EXIT.PASS;
  },
};

function rate(raw: unknown): string {
  const r = isObject(raw) ? raw : {};
  if (typeof r.passed !== 'number' || typeof r.n !== 'number') return 'n/a';
  return formatRate(r.passed, r.n, typeof r.lower === 'number' ? r.lower : 0, typeof r.upper === 'number' ? r.upper : 1);
}
