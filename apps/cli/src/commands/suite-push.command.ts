import * as path from 'node:path';
import { parseOptions, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { styles } from '../format';
import { clientFor, isObject, url } from '../http';
import { pushSuiteFile } from '../suite-arg';

/**
 * `evals suite push FILE` (V2, V3): POSTs the YAML as application/yaml to the ingestion API, with the local
 * validation's answer (file, line, case and field for every problem, exit 2) for a file with problems -
 * checked before the POST for a small file, after a refusal for a large one (pushSuiteFile). Identical
 * content returns the existing version (HTTP 200), new content mints one (201).
 */
export const suitePushCommand: Command = {
  name: 'suite push',
  service: true,
  summary: 'Push a suite file to the service: prints the version, created or existing (V2, V3).',
  usage: 'evals suite push FILE [--json] [--server URL]',
  options: ['--json                   print the API answer {created, suite} as JSON', ...SERVER_OPTION_HELP],
  example: 'evals suite push examples/support-triage.suite.yaml --server http://127.0.0.1:3001',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { json: { type: 'boolean' }, ...SERVER_OPTIONS }, { min: 1, max: 1, names: 'suite FILE' });
    const client = clientFor(values, io, 60);
    const pushed = await pushSuiteFile(client, path.resolve(io.cwd, positionals[0]));
    if (values.json) {
      io.out(JSON.stringify(pushed.body, null, 2));
      return EXIT.PASS;
    }
    const body = isObject(pushed.body) ? pushed.body : {};
    const suite = isObject(body.suite) ? body.suite : {};
    const s = styles(io.env, io.isTty);
    const created = body.created === true;
    const same = typeof body.same_content_as === 'number' ? ` (same content as v${body.same_content_as})` : '';
    io.out(
      `${s.bold(`${String(suite.suite_key ?? '?')} v${String(suite.version ?? '?')}`)}: ${created ? s.green('created') : 'existing (identical content, nothing changed)'}${same}` +
        `\n  ${String(suite.case_count ?? '?')} cases, content ${String(suite.content_hash ?? '?')}`,
    );
    return EXIT.PASS;
  },
};
