import * as path from 'node:path';
import { integerOption, parseOptions, REPORT_OPTION_HELP, REPORT_OPTIONS, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command, type Io } from '../command';
import { writeFile } from '../emit';
import { EXIT, UsageError } from '../exit-codes';
import { clientFor, type ServerFlags } from '../http';
import { classifySuite, explainUnknownSuite, fetchSuite, suiteFlagIsKey } from '../suite-arg';
import { styles } from '../format';
import { renderJunit } from '../junit';
import { compareLocal, loadOutputs, loadSuite, scoreLocally } from '../local-evaluation';
import { localReport, localSummary } from '../local-report';
import { renderMarkdown } from '../markdown';
import { createProgress } from '../progress';
import { fromLocal, renderNotes } from '../report';

/** `evals score`: scores an outputs file against a suite file in this process; no server, nothing stored. */
export const scoreCommand: Command = {
  name: 'score',
  // A suite file is scored without the service; a suite key is fetched from it (and nothing is stored).
  service: (args, io) => suiteFlagIsKey(args, io.cwd),
  summary: 'Score outputs against a suite locally (nothing stored), optionally against a baseline.',
  usage: 'evals score --suite FILE|KEY --outputs FILE.jsonl [--baseline FILE.jsonl] [--suite-version N] [--json] [--junit FILE] [--summary FILE]',
  options: [
    '--suite FILE|KEY         suite YAML file (no service needed), or the key of a suite stored on the service (required)',
    '--outputs FILE.jsonl     {"case_id", "output"} objects: JSON Lines, a JSON array or pretty-printed (required)',
    '--baseline FILE.jsonl    baseline outputs: compare with Newcombe intervals (G1, G2)',
    '--suite-version N        with a key; default: the latest version',
    ...REPORT_OPTION_HELP,
    ...SERVER_OPTION_HELP.map((line) => `${line} (with a suite key)`),
  ],
  example: 'evals score --suite examples/support-triage.suite.yaml --outputs examples/support-triage.regressed.outputs.jsonl --baseline examples/support-triage.good.outputs.jsonl',
  async run(args, io) {
    const { values } = parseOptions(args, { suite: { type: 'string' }, outputs: { type: 'string' }, baseline: { type: 'string' }, 'suite-version': { type: 'string' }, ...REPORT_OPTIONS, ...SERVER_OPTIONS });
    if (!values.suite || !values.outputs) required(undefined, '--suite and --outputs');
    const started = (io.now ?? Date.now)();
    const suiteArg = classifySuite(values.suite!, io.cwd);
    const version = integerOption(values['suite-version'], '--suite-version', 1);
    if (suiteArg.kind === 'file' && version !== undefined) throw new UsageError('--suite-version goes with a suite key: a suite file is scored as it is');
    const { suite, scorers } = suiteArg.kind === 'file' ? loadSuite(suiteArg.file) : await fromService(suiteArg.key, version, values, io);
    const progress = createProgress(io, values.json, 'scoring');
    let run;
    let baseline;
    try {
      run = scoreLocally('candidate', suite, scorers, loadOutputs(path.resolve(io.cwd, values.outputs!)), (done, total) => progress.update(done, total));
      progress.phase('scoring the baseline');
      baseline = values.baseline ? scoreLocally('baseline', suite, scorers, loadOutputs(path.resolve(io.cwd, values.baseline)), (done, total) => progress.update(done, total)) : undefined;
    } finally {
      progress.stop();
    }
    const comparison = baseline ? compareLocal(run, baseline, suite.regression_threshold) : undefined;
    const report = fromLocal(suite.key, suite.pass_threshold, run, comparison, ((io.now ?? Date.now)() - started) / 1000);
    if (values.junit) writeFile(io, values.junit, renderJunit(report), '--junit', false);
    if (values.summary) writeFile(io, values.summary, renderMarkdown(report), '--summary', true);
    if (values.json) {
      io.out(JSON.stringify({ suite: suite.key, run: localSummary(run), baseline: baseline && localSummary(baseline), comparison, verdict: report.verdict }, null, 2));
    } else {
      const s = styles(io.env, io.isTty);
      io.out([localReport(suite.key, suite.pass_threshold, run, baseline, comparison, s), ...renderNotes(report, s)].join('\n'));
    }
    return report.verdict === 'pass' ? EXIT.PASS : EXIT.FAILED;
  },
};

/** A stored suite, fetched for local scoring; the version used is said on stderr (stdout is the report). */
async function fromService(key: string, version: number | undefined, flags: ServerFlags, io: Io) {
  const client = clientFor(flags, io, 60);
  try {
    const fetched = await fetchSuite(client, key, version);
    io.err(`evals score: suite ${key} v${fetched.version} from ${client.endpoints.ingestion}`);
    return fetched;
  } catch (error) {
    throw await explainUnknownSuite(error, [key], client, io);
  }
}
