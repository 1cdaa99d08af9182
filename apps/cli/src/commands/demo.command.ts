import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseOptions, type Command } from '../command';
import { CliError, EXIT } from '../exit-codes';
import { styles } from '../format';
import { compareLocal, loadOutputs, loadSuite, scoreLocally } from '../local-evaluation';
import { localReport } from '../local-report';

/** `evals demo`: the example suites scored locally, a good baseline against a regressed candidate. */
export const demoCommand: Command = {
  name: 'demo',
  summary: 'Score the example suites: a good baseline, then a regressed candidate, and the verdicts.',
  usage: 'evals demo',
  example: 'evals demo',
  async run(args, io) {
    parseOptions(args, {});
    const root = examplesRoot();
    const s = styles(io.env, io.isTty);
    io.out(s.bold('evals demo: a baseline run, a candidate run, and the regression verdict (no server needed)\n'));
    for (const name of ['support-triage', 'extraction-json']) {
      const { suite, scorers } = loadSuite(path.join(root, 'examples', `${name}.suite.yaml`));
      const baseline = scoreLocally('baseline', suite, scorers, loadOutputs(path.join(root, 'examples', `${name}.good.outputs.jsonl`)));
      const run = scoreLocally('candidate', suite, scorers, loadOutputs(path.join(root, 'examples', `${name}.regressed.outputs.jsonl`)));
      io.out(localReport(suite.key, suite.pass_threshold, run, baseline, compareLocal(run, baseline, suite.regression_threshold), s));
      io.out('');
    }
    io.out(
      [
        'Next:',
        '  npx evals score --suite FILE --outputs FILE.jsonl --baseline FILE.jsonl   score your own outputs',
        '  npx evals suite validate FILE                                            check a suite',
        '  npx evals suite push FILE && npx evals run --suite KEY --outputs FILE.jsonl --subject-id ID',
        '                                                                           the same through the service',
        '  docs/cli.md, docs/architecture.md, docs/statistics.md                    how it works',
      ].join('\n'),
    );
    return EXIT.PASS;
  },
};

/** The checkout holding `examples/`: found by walking up, so it works from the sources and from dist/. */
function examplesRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'examples', 'support-triage.suite.yaml'))) return dir;
    if (path.dirname(dir) === dir) throw new CliError(EXIT.USAGE, 'the example suites (examples/) are not installed next to the CLI');
  }
}
