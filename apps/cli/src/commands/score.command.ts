import * as path from 'node:path';
import { parseOptions, REPORT_OPTION_HELP, REPORT_OPTIONS, required, type Command } from '../command';
import { writeFile } from '../emit';
import { EXIT } from '../exit-codes';
import { styles } from '../format';
import { renderJunit } from '../junit';
import { compareLocal, loadOutputs, loadSuite, scoreLocally } from '../local-evaluation';
import { localReport, localSummary } from '../local-report';
import { renderMarkdown } from '../markdown';
import { createProgress } from '../progress';
import { fromLocal } from '../report';

/** `evals score`: scores an outputs file against a suite file in this process; no server, nothing stored. */
export const scoreCommand: Command = {
  name: 'score',
  summary: 'Score outputs against a suite locally (no server), optionally against a baseline.',
  usage: 'evals score --suite FILE --outputs FILE.jsonl [--baseline FILE.jsonl] [--json] [--junit FILE] [--summary FILE]',
  options: [
    '--suite FILE             suite YAML file (required)',
    '--outputs FILE.jsonl     one {"case_id", "output"} object per line (required)',
    '--baseline FILE.jsonl    baseline outputs: compare with Newcombe intervals (G1, G2)',
    ...REPORT_OPTION_HELP,
  ],
  example: 'evals score --suite examples/support-triage.suite.yaml --outputs examples/support-triage.regressed.outputs.jsonl --baseline examples/support-triage.good.outputs.jsonl',
  async run(args, io) {
    const { values } = parseOptions(args, { suite: { type: 'string' }, outputs: { type: 'string' }, baseline: { type: 'string' }, ...REPORT_OPTIONS });
    if (!values.suite || !values.outputs) required(undefined, '--suite and --outputs');
    const started = (io.now ?? Date.now)();
    const { suite, scorers } = loadSuite(path.resolve(io.cwd, values.suite!));
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
      io.out(localReport(suite.key, suite.pass_threshold, run, baseline, comparison, styles(io.env, io.isTty)));
    }
    return report.verdict === 'pass' ? EXIT.PASS : EXIT.FAILED;
  },
};
