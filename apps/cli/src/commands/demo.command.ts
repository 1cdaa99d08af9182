import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseOptions, SERVER_OPTIONS, type Command, type Io } from '../command';
import { CliError, EXIT } from '../exit-codes';
import { styles } from '../format';
import { clientFor, isObject, url } from '../http';
import { compareLocal, loadOutputs, loadSuite, scoreLocally } from '../local-evaluation';
import { localReport } from '../local-report';
import { NO_PROGRESS } from '../progress';
import { waitForCompletedRun } from '../run-watch';
import { baselinePinCommand } from './baseline-pin.command';
import { gateCommand } from './gate.command';
import { runCommand } from './run.command';
import { scorecardCommand } from './scorecard.command';
import { suitePushCommand } from './suite-push.command';

const SUITE = 'support-triage';
const SUBJECT = 'demo-support-bot';

/**
 * `evals demo` (README's first command): the whole path on the service - by default the embedded
 * all-in-one in .evals/, so no server is needed. It pushes an example suite, records a baseline run and
 * pins it (G5), gates a regressed candidate against it (the Newcombe comparison and the verdict), shows the finding the
 * regression raised and the subject's scorecard, then says how to go on. `--local` scores in this process
 * without the service, as `evals score` does.
 */
export const demoCommand: Command = {
  name: 'demo',
  // `--local` scores in this process: no service to open.
  service: (args) => !args.includes('--local'),
  summary: 'The whole path on the embedded service: suite, baseline, regressed candidate, gate, finding, scorecard.',
  usage: 'evals demo [--local] [--server URL]',
  options: ['--local                  score the example suites in this process, without the service', '--server URL             use a running service instead of the embedded one'],
  example: 'evals demo',
  async run(args, io) {
    const { values } = parseOptions(args, { local: { type: 'boolean' }, ...SERVER_OPTIONS });
    const root = examplesRoot();
    return values.local ? localDemo(root, io) : serviceDemo(root, values, io);
  },
};

async function serviceDemo(root: string, flags: Record<string, unknown>, io: Io): Promise<number> {
  const s = styles(io.env, io.isTty);
  const file = (name: string) => path.join(root, 'examples', name);
  const stamp = randomUUID().slice(0, 8);
  const baselineRun = `demo-${stamp}-baseline`;
  const candidateRun = `demo-${stamp}-candidate`;
  // The steps are the ordinary commands; the server flags given to the demo go on to each of them.
  const server = (['server', 'read-server', 'regression-server', 'api-key', 'project', 'timeout'] as const).flatMap((f) => (typeof flags[f] === 'string' ? [`--${f}`, flags[f] as string] : []));
  const step = (n: number, text: string) => io.out(`\n${s.bold(`${n}. ${text}`)}`);

  io.out(s.bold(`evals demo: a suite, a baseline, a regressed candidate and the gate, on ${io.env.EVALS_SERVER ?? 'the service'}`));
  step(1, `push the example suite ${SUITE} (versioned: the same content is the same version, V2)`);
  await expectExit(suitePushCommand.run([file(`${SUITE}.suite.yaml`), ...server], io), [EXIT.PASS], 'suite push');

  step(2, `record a baseline run of ${SUBJECT} with good outputs`);
  await expectExit(runCommand.run(['--suite', SUITE, '--outputs', file(`${SUITE}.good.outputs.jsonl`), '--subject-id', SUBJECT, '--run-id', baselineRun, ...server], io), [EXIT.PASS, EXIT.FAILED], 'run');

  // Pinned rather than named with --baseline on each gate: every later gate of the subject - the README's
  // follow-up, CI - compares with it. The suite has no llm_judge case, so the gate's verdict is about the
  // regression alone; the judge's own path (examples/reply-tone.suite.yaml) is in the Next: block.
  step(3, `pin that run as the baseline of ${SUBJECT} (G5: later gates compare with it)`);
  await expectExit(baselinePinCommand.run(['--suite', SUITE, '--subject-id', SUBJECT, '--run', baselineRun, ...server], io), [EXIT.PASS], 'baseline pin');

  step(4, 'gate a candidate whose outputs regressed, against that baseline (what CI runs; exit 1 blocks the release)');
  const gate = await expectExit(
    gateCommand.run(['--suite', SUITE, '--subject-id', SUBJECT, '--outputs', file(`${SUITE}.regressed.outputs.jsonl`), '--run-id', candidateRun, ...server], io),
    [EXIT.PASS, EXIT.FAILED],
    'gate',
  );
  io.out(`gate exit code: ${gate}${gate === EXIT.FAILED ? ' (the release would be blocked)' : ''}`);

  step(5, 'the finding the regression raised (also published as finding.reported, G6)');
  const client = clientFor(flags, io, 60);
  const finding = await client.get(url(client.endpoints.regression, `/v1/findings/${encodeURIComponent(candidateRun)}`));
  io.out(describeFinding(finding.body));

  step(6, `the scorecard of ${SUBJECT} (SC1)`);
  // The gate answered from the run's stream in the log; the scorecard is the read model's, which projects the
  // same comparison a moment later: wait for it there, as any reader of the read model does (ADR 0006).
  await waitForCompletedRun(client, candidateRun, Date.now() + client.timeoutMs, NO_PROGRESS);
  await expectExit(scorecardCommand.run(['--suite', SUITE, '--subject-id', SUBJECT, ...server], io), [EXIT.PASS], 'scorecard');

  io.out(
    [
      '',
      s.bold('Next:'),
      '  npx evals serve                                  keep the service running on http://127.0.0.1:3000 (data stays in .evals/)',
      `  curl http://127.0.0.1:3000/v1/runs/${candidateRun}`,
      '                                                   the HTTP API while it runs (OpenAPI: /openapi.json)',
      `  npx evals gate --suite ${SUITE} --subject-id ${SUBJECT} --outputs examples/${SUITE}.regressed.outputs.jsonl`,
      '                                                   the same gate again, against the pinned baseline (the README\'s next step)',
      '  npx evals gate --suite FILE.suite.yaml --subject-id ID --outputs FILE.jsonl',
      '                                                   your own suite and outputs, in CI',
      '  an llm_judge suite (examples/reply-tone.suite.yaml) gates once its judge is certified (docs/calibration.md):',
      '    JUDGE_PROVIDER=openai JUDGE_MODEL=gpt-4o-2024-08-06 JUDGE_API_KEY=... JUDGE_INPUT_USD_PER_MTOK=2.5 JUDGE_OUTPUT_USD_PER_MTOK=10 npx evals serve',
      '                                                   point the service at a judge provider (docs/judge.md)',
      '    npx evals suite push examples/reply-tone.suite.yaml',
      '    npx evals label --set ITEMS.jsonl             label at least 50 outputs of its cases, 10 pass and 10 fail',
      '    npx evals calibrate --suite reply-tone --labels ITEMS.labels.jsonl --items ITEMS.jsonl',
      '                                                   measure the judge against the labels: certified or not',
      '    npx evals gate --suite examples/reply-tone.suite.yaml --subject-id ID --outputs examples/reply-tone.outputs.jsonl',
      '                                                   then the gate trusts it, and shows the judge-corrected pass rate',
      '  docs/embedded.md, docs/cli.md, docs/gate.md, docs/EVAL-METHODOLOGY.md   how it works',
    ].join('\n'),
  );
  return EXIT.PASS;
}

async function expectExit(pending: Promise<number>, allowed: readonly number[], what: string): Promise<number> {
  const code = await pending;
  if (!allowed.includes(code)) throw new CliError(code === EXIT.UNREACHABLE ? EXIT.UNREACHABLE : EXIT.USAGE, `the demo's ${what} step ended with exit code ${code}`);
  return code;
}

function describeFinding(body: unknown): string {
  if (!isObject(body) || !isObject(body.pass_rate_diff) || !isObject(body.run) || !isObject(body.baseline)) return 'no finding was recorded';
  const d = body.pass_rate_diff as Record<string, number>;
  // The interval that decided (G7): paired when both runs scored the same cases.
  const method = (body.pass_rate_diff as { method?: unknown }).method === 'newcombe_paired_10' ? 'Newcombe paired method 10' : 'Newcombe hybrid score';
  const run = body.run as { passed: number; n: number };
  const base = body.baseline as { passed: number; n: number };
  const pp = (x: number) => `${(x * 100).toFixed(1)} pp`;
  return [
    `finding ${String(body.finding_id)} (${String(body.kind)}) for run ${String(body.run_id)} against ${String(body.baseline_run_id)}`,
    `  ${String(body.suite)} v${String(body.suite_version)}, ${String(body.subject_kind)}/${String(body.subject_id)}: score drop ${Number(body.score_drop).toFixed(3)}`,
    `  pass rate ${run.passed}/${run.n} vs baseline ${base.passed}/${base.n}: difference ${pp(d.diff)} (95% CI ${pp(d.lower)} to ${pp(d.upper)}, ${method})`,
  ].join('\n');
}

function localDemo(root: string, io: Io): number {
  const s = styles(io.env, io.isTty);
  io.out(s.bold('evals demo --local: a baseline run, a candidate run, and the regression verdict (scored in this process)\n'));
  for (const name of ['support-triage', 'extraction-json']) {
    const { suite, scorers } = loadSuite(path.join(root, 'examples', `${name}.suite.yaml`));
    const baseline = scoreLocally('baseline', suite, scorers, loadOutputs(path.join(root, 'examples', `${name}.good.outputs.jsonl`)));
    const run = scoreLocally('candidate', suite, scorers, loadOutputs(path.join(root, 'examples', `${name}.regressed.outputs.jsonl`)));
    io.out(localReport(suite.key, suite.pass_threshold, run, baseline, compareLocal(run, baseline, suite.regression_threshold), s));
    io.out('');
  }
  io.out('Next: npx evals demo (the same on the service), npx evals score --help, docs/cli.md');
  return EXIT.PASS;
}

/** The checkout holding `examples/`: found by walking up, so it works from the sources and from dist/. */
function examplesRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'examples', 'support-triage.suite.yaml'))) return dir;
    if (path.dirname(dir) === dir) throw new CliError(EXIT.USAGE, 'the example suites (examples/) are not installed next to the CLI');
  }
}
