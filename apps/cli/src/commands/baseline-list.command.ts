import { parseOptions, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { table } from '../format';
import { suiteKeyOf } from '../suite-arg';
import { clientFor, isObject, url } from '../http';

/** `evals baseline list`: the pinned baselines (`GET /v1/baselines` on the regression app). */
export const baselineListCommand: Command = {
  name: 'baseline list',
  service: true,
  summary: 'List pinned baselines, optionally of one suite or subject.',
  usage: 'evals baseline list [--suite KEY|FILE] [--subject-id ID] [--json]',
  options: ['--suite KEY|FILE         only this suite (a suite file stands for its key)', '--subject-id ID          only this subject', '--json                   print the API answer as JSON', ...SERVER_OPTION_HELP],
  example: 'evals baseline list --suite support-triage',
  async run(args, io) {
    const { values } = parseOptions(args, { suite: { type: 'string' }, 'subject-id': { type: 'string' }, json: { type: 'boolean' }, ...SERVER_OPTIONS });
    const client = clientFor(values, io, 60);
    const answer = await client.get(url(client.endpoints.regression, '/v1/baselines', { suite_key: suiteKeyOf(values.suite, io.cwd), subject_id: values['subject-id'] }));
    if (values.json) {
      io.out(JSON.stringify(answer.body, null, 2));
      return EXIT.PASS;
    }
    const pins = isObject(answer.body) && Array.isArray(answer.body.pins) ? answer.body.pins.filter(isObject) : [];
    if (pins.length === 0) {
      io.out('no pinned baselines');
      return EXIT.PASS;
    }
    const rows = [['suite', 'subject', 'variant', 'run', 'pinned at']];
    for (const p of pins) rows.push([String(p.suite_key), `${String(p.subject_kind)}/${String(p.subject_id)}`, p.variant ? String(p.variant) : '(any)', String(p.run_id), p.pinned_at ? String(p.pinned_at) : '']);
    io.out(table(rows));
    return EXIT.PASS;
  },
};
