import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { Comparison } from '@evals/domain';
import { CliError, EXIT } from './exit-codes';
import { formatDiff, formatRate, styles, table, type Styles } from './format';
import { compareLocal, loadOutputs, loadSuite, scoreLocally, type LocalRun } from './local-evaluation';

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTty: boolean;
  readonly cwd: string;
}

interface Command {
  readonly summary: string;
  readonly usage: string;
  readonly example: string;
  run(args: string[], io: Io): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  'suite validate': {
    summary: 'Validate a suite file; every problem is named with file, line, case and field.',
    usage: 'evals suite validate FILE [--json]',
    example: 'evals suite validate examples/support-triage.suite.yaml',
    async run(args, io) {
      const { values, positionals } = parse(args, { json: { type: 'boolean' } });
      if (positionals.length !== 1) throw new CliError(EXIT.USAGE, 'expected exactly one suite FILE');
      const { suite, scorers } = loadSuite(path.resolve(io.cwd, positionals[0]));
      const versions = [...new Map(scorers.map((s) => [s.name, s.version])).entries()];
      if (values.json) io.out(JSON.stringify({ valid: true, key: suite.key, cases: suite.cases.length, scorers: Object.fromEntries(versions) }));
      else io.out(`${suite.key}: valid, ${suite.cases.length} cases, scorers ${versions.map(([n, v]) => `${n}@${v}`).join(', ')}`);
      return EXIT.PASS;
    },
  },
  score: {
    summary: 'Score outputs against a suite locally (no server), optionally against a baseline.',
    usage: 'evals score --suite FILE --outputs FILE.jsonl [--baseline FILE.jsonl] [--json]',
    example: 'evals score --suite examples/support-triage.suite.yaml --outputs examples/support-triage.regressed.outputs.jsonl --baseline examples/support-triage.good.outputs.jsonl',
    async run(args, io) {
      const { values } = parse(args, { suite: { type: 'string' }, outputs: { type: 'string' }, baseline: { type: 'string' }, json: { type: 'boolean' } });
      if (!values.suite || !values.outputs) throw new CliError(EXIT.USAGE, '--suite and --outputs are required');
      const { suite, scorers } = loadSuite(path.resolve(io.cwd, values.suite));
      const run = scoreLocally('candidate', suite, scorers, loadOutputs(path.resolve(io.cwd, values.outputs)));
      const baseline = values.baseline ? scoreLocally('baseline', suite, scorers, loadOutputs(path.resolve(io.cwd, values.baseline))) : undefined;
      const comparison = baseline ? compareLocal(run, baseline, suite.regression_threshold) : undefined;
      const failed = !run.run_passed || comparison?.verdict === 'regressed';
      if (values.json) {
        io.out(JSON.stringify({ suite: suite.key, run: summary(run), baseline: baseline && summary(baseline), comparison, verdict: failed ? 'fail' : 'pass' }, null, 2));
      } else {
        io.out(report(suite.key, suite.pass_threshold, run, baseline, comparison, styles(io.env, io.isTty)));
      }
      return failed ? EXIT.FAILED : EXIT.PASS;
    },
  },
  demo: {
    summary: 'Score the example suites: a good baseline, then a regressed candidate, and the verdicts.',
    usage: 'evals demo',
    example: 'evals demo',
    async run(_args, io) {
      const root = path.resolve(__dirname, '../../..');
      const s = styles(io.env, io.isTty);
      io.out(s.bold('evals demo: a baseline run, a candidate run, and the regression verdict (no server needed)\n'));
      for (const name of ['support-triage', 'extraction-json']) {
        const { suite, scorers } = loadSuite(path.join(root, 'examples', `${name}.suite.yaml`));
        const baseline = scoreLocally('baseline', suite, scorers, loadOutputs(path.join(root, 'examples', `${name}.good.outputs.jsonl`)));
        const run = scoreLocally('candidate', suite, scorers, loadOutputs(path.join(root, 'examples', `${name}.regressed.outputs.jsonl`)));
        io.out(report(suite.key, suite.pass_threshold, run, baseline, compareLocal(run, baseline, suite.regression_threshold), s));
        io.out('');
      }
      io.out(
        [
          'Next:',
          '  npx evals score --suite FILE --outputs FILE.jsonl --baseline FILE.jsonl   score your own outputs',
          '  npx evals suite validate FILE                                            check a suite',
          '  docs/architecture.md, docs/scorers.md, docs/statistics.md                 how it works',
        ].join('\n'),
      );
      return EXIT.PASS;
    },
  },
};

function summary(run: LocalRun) {
  return { n: run.n, passed: run.passed, pass_rate: run.n ? run.passed / run.n : null, pass_rate_ci: { ...run.interval, level: 0.95 }, score: run.score, passed_threshold: run.run_passed };
}

function report(key: string, threshold: number, run: LocalRun, baseline: LocalRun | undefined, c: Comparison | undefined, s: Styles): string {
  const lines = [s.bold(`suite ${key}`)];
  const rows: string[][] = [['run', 'pass rate', 'mean score', `pass threshold ${(threshold * 100).toFixed(0)}%`]];
  for (const r of [baseline, run].filter((x): x is LocalRun => x !== undefined)) {
    rows.push([r.label, formatRate(r.passed, r.n, r.interval.lower, r.interval.upper), r.score.toFixed(3), r.run_passed ? s.green('pass') : s.red('below threshold')]);
  }
  lines.push(table(rows));
  const failing = run.cases.filter((x) => !x.passed);
  if (failing.length > 0) lines.push(s.dim(`failing cases: ${failing.map((x) => `${x.case_id} (${x.label})`).join(', ')}`));
  if (c) {
    const verdict = c.verdict === 'regressed' ? s.red('REGRESSED') : c.verdict === 'inconclusive_noise' ? s.yellow('inconclusive (noise)') : s.green('no regression');
    lines.push(`score drop ${c.score_drop.toFixed(3)} (threshold ${c.regression_threshold}); pass-rate difference ${formatDiff(c.pass_rate_diff.diff, c.pass_rate_diff.lower, c.pass_rate_diff.upper)}, Newcombe hybrid score`);
    lines.push(`verdict: ${verdict}`);
  }
  return lines.join('\n');
}

function parse<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliError(EXIT.USAGE, error instanceof Error ? error.message : 'invalid arguments');
  }
}

export function help(command?: string): string {
  if (command && COMMANDS[command]) {
    const c = COMMANDS[command];
    return `${c.summary}\n\nUsage: ${c.usage}\n\nExample:\n  ${c.example}\n\nExit codes: 0 pass, 1 evaluation failed, 2 usage or input error, 3 service unreachable.`;
  }
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    'evals: score agent outputs against versioned golden suites, with honest statistics.',
    '',
    'Usage: evals COMMAND [options]   (evals COMMAND --help for one command)',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Exit codes: 0 pass, 1 evaluation failed, 2 usage or input error, 3 service unreachable.',
  ].join('\n');
}

export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  const args = [...argv];
  if (args.length === 0 || args[0] === '--help' || args[0] === '-h' || args[0] === 'help') {
    io.out(help(args[1] && args[0] === 'help' ? args.slice(1).join(' ') : undefined));
    return args.length === 0 ? EXIT.USAGE : EXIT.PASS;
  }
  const name = COMMANDS[`${args[0]} ${args[1]}`] ? `${args[0]} ${args[1]}` : args[0];
  const command = COMMANDS[name];
  if (!command) {
    io.err(`evals: unknown command ${args[0]}\n\n${help()}`);
    return EXIT.USAGE;
  }
  const rest = args.slice(name.split(' ').length);
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(help(name));
    return EXIT.PASS;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`evals ${name}: ${error.message}`);
      return error.exitCode;
    }
    io.err(`evals ${name}: unexpected error: ${error instanceof Error ? error.name : 'error'}`);
    return EXIT.USAGE;
  }
}
