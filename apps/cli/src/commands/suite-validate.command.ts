import * as path from 'node:path';
import { parseOptions, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { loadSuite } from '../local-evaluation';

/** `evals suite validate FILE`: the same checks as `POST /v1/suites`, offline (S2, S4, V1). */
export const suiteValidateCommand: Command = {
  name: 'suite validate',
  summary: 'Validate a suite file; every problem is named with file, line, case and field.',
  usage: 'evals suite validate FILE [--json]',
  options: ['--json                   print {valid, key, cases, scorers} as JSON'],
  example: 'evals suite validate examples/support-triage.suite.yaml',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { json: { type: 'boolean' } }, { min: 1, max: 1, names: 'suite FILE' });
    const { suite, scorers } = loadSuite(path.resolve(io.cwd, positionals[0]));
    const versions = [...new Map(scorers.map((s) => [s.name, s.version])).entries()];
    if (values.json) io.out(JSON.stringify({ valid: true, key: suite.key, cases: suite.cases.length, scorers: Object.fromEntries(versions) }));
    else io.out(`${suite.key}: valid, ${suite.cases.length} cases, scorers ${versions.map(([n, v]) => `${n}@${v}`).join(', ')}`);
    return EXIT.PASS;
  },
};
