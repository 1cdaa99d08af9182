import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { integerOption, parseOptions, REPORT_OPTION_HELP, REPORT_OPTIONS, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { emitReport } from '../emit';
import { CliError, EXIT, UnreachableError, UsageError } from '../exit-codes';
import type { Schemas } from '../api/api-types';
import { clientFor, isObject, url, type ApiClient } from '../http';
import { bytesText, loadOutputList, withCaseOfField } from '../outputs-file';
import { createProgress, NO_PROGRESS, type Progress } from '../progress';
import { fromGate } from '../report';
import { classifySuite, explainUnknownSuite, useSuite, useSuiteVersionWithFile } from '../suite-arg';
import { waitForCompletedRun, watchRunProgress } from '../run-watch';
import { fitsInline, scanOutputs, sealStreamedRun, sendStreamedOutputs } from '../streamed-run';

/**
 * `evals gate` (GT1-GT7; docs/gate.md): the same inputs as `POST /v1/gate`. Exit 0 when the gate passes,
 * 1 when it fails (regressed, below the pass threshold, judge uncalibrated, budget blocked), 2 when our
 * input is refused, 3 when the service cannot be reached. Warnings are printed, never change the exit code.
 * Several `--suite KEY --outputs FILE` pairs gate a family of suites (GT7): each suite as on its own, the
 * regression tests adjusted by Holm's method, the exit code by the family's verdict.
 */
export const gateCommand: Command = {
  name: 'gate',
  service: true,
  summary: 'Run the regression gate (POST /v1/gate): a blocking CI verdict, exit 0 pass / 1 fail.',
  usage:
    'evals gate --suite KEY|FILE --subject-id ID (--outputs FILE.jsonl | --run-id ID) [--suite-version N] [--subject-kind KIND] [--variant V] [--baseline RUN] [--sample-size N --seed S] [--json] [--junit FILE] [--summary FILE]\n       evals gate --subject-id ID --suite A --outputs a.jsonl --suite B --outputs b.jsonl ... [--subject-kind KIND] [--variant V] [--sample-size N --seed S] [...]',
  options: [
    '--suite KEY|FILE         suite key, or a suite file: pushed first (idempotent) and its version used (required);',
    '                         repeat with --outputs, in pairs, to gate several suites as one family (GT7, Holm)',
    '--subject-id ID          subject of the run (required)',
    '--outputs FILE.jsonl     score these outputs as a new run (with --run-id as its idempotency key); JSON Lines, a JSON array or pretty-printed',
    '--run-id ID              without --outputs: gate this existing completed run',
    '--suite-version N        with a key; default: the latest version',
    '--subject-kind KIND      default agent',
    '--variant V              variant of the subject (automatic baseline: same variant, G4)',
    '--baseline RUN           explicit baseline run id (G5)',
    '--sample-size N          score a seeded sample of N cases (GT3); needs --seed',
    '--seed S                 the sample seed: same seed, same sample',
    ...REPORT_OPTION_HELP,
    ...SERVER_OPTION_HELP,
    '                         (default --timeout for the gate: 600 s)',
  ],
  example:
    'evals gate --suite support-triage --subject-id support-bot --outputs outputs.jsonl --run-id "ci-$GITHUB_RUN_ID" --sample-size 50 --seed "ci-$GITHUB_RUN_ID" --junit reports/gate.xml --summary "$GITHUB_STEP_SUMMARY"',
  async run(args, io) {
    const { values } = parseOptions(args, {
      suite: { type: 'string', multiple: true },
      'suite-version': { type: 'string' },
      'subject-kind': { type: 'string' },
      'subject-id': { type: 'string' },
      variant: { type: 'string' },
      baseline: { type: 'string' },
      outputs: { type: 'string', multiple: true },
      'run-id': { type: 'string' },
      'sample-size': { type: 'string' },
      seed: { type: 'string' },
      ...REPORT_OPTIONS,
      ...SERVER_OPTIONS,
    });
    const suites = values.suite ?? [];
    const outputFiles = values.outputs ?? [];
    const suiteVersion = integerOption(values['suite-version'], '--suite-version', 1);
    const sampleSize = integerOption(values['sample-size'], '--sample-size', 1);
    if ((sampleSize === undefined) !== (values.seed === undefined)) throw new UsageError('--sample-size and --seed go together (GT3: the seed chooses the sample)');
    const sample = sampleSize !== undefined ? { sample: { size: sampleSize, seed: values.seed! } } : {};
    const subject = () => ({ subject_kind: values['subject-kind'] ?? 'agent', subject_id: required(values['subject-id'], '--subject-id'), ...(values.variant ? { variant: values.variant } : {}) });
    let client: ApiClient;
    let body: Schemas['GateRequestBody'] | Schemas['GateFamilyRequestBody'];
    let runId: string | undefined;
    let total: number | null;
    let keys: string[];
    let sent: Array<Array<{ case_id: string }>>;
    let streamed: { file: string; count: number } | null = null;
    if (suites.length > 1) {
      if (outputFiles.length !== suites.length) throw new UsageError(`several suites: give one --outputs FILE.jsonl after each --suite KEY (got ${suites.length} --suite and ${outputFiles.length} --outputs)`);
      for (const [flag, value] of [['--run-id', values['run-id']], ['--baseline', values.baseline], ['--suite-version', values['suite-version']]] as const) {
        if (value !== undefined) throw new UsageError(`${flag} names one suite's run or version: with several suites, gate each new run against its automatic baseline (leave ${flag} out)`);
      }
      const args = suites.map((value) => classifySuite(required(value, '--suite'), io.cwd));
      const who = subject();
      client = clientFor(values, io, 600);
      const outputsOf = outputFiles.map((file) => loadOutputList(path.resolve(io.cwd, file)));
      const members = [];
      for (const [i, arg] of args.entries()) {
        const used = await useSuite(arg, undefined, client, io, 'gate');
        members.push({ suite_key: used.key, ...(used.version !== undefined ? { suite_version: used.version } : {}), outputs: outputsOf[i]!, ...sample });
      }
      keys = members.map((m) => m.suite_key);
      sent = outputsOf;
      body = { ...who, suites: members };
      total = members.reduce((n, m) => n + m.outputs.length, 0);
    } else {
      if (outputFiles.length > 1) throw new UsageError('one --outputs per --suite');
      if (!outputFiles[0] && !values['run-id']) throw new UsageError('give --outputs FILE.jsonl (a new run) or --run-id ID (an existing run)');
      const arg = classifySuite(required(suites[0], '--suite'), io.cwd);
      if (arg.kind === 'file' && suiteVersion !== undefined) useSuiteVersionWithFile();
      const who = subject();
      client = clientFor(values, io, 600);
      // Every limit is checked before anything is sent, the suite push included. Above the inline cap the
      // run is streamed first (streamed-run.ts) and the gate decides on it as on any completed run.
      const file = outputFiles[0] ? path.resolve(io.cwd, outputFiles[0]) : undefined;
      const scan = file ? scanOutputs(file) : undefined;
      if (scan && !fitsInline(scan) && sampleSize !== undefined) {
        throw new CliError(EXIT.USAGE, `${file}: ${scan.count} outputs (${bytesText(scan.jsonBytes)} as JSON) are more than one inline run takes (MAX_INLINE_OUTPUTS, MAX_MESSAGE_BYTES, docs/contracts.md), and a sampled gate (--sample-size) sends its outputs inline: send only the sample's outputs, or gate the whole run without --sample-size`);
      }
      const outputs = file && scan && fitsInline(scan) ? loadOutputList(file) : undefined;
      const used = await useSuite(arg, suiteVersion, client, io, 'gate');
      keys = [used.key];
      sent = outputs ? [outputs] : [];
      runId = values['run-id'] ?? `cli-${randomUUID()}`;
      if (file && scan && !outputs) streamed = { file, count: scan.count };
      body = {
        suite_key: used.key,
        ...(used.version !== undefined ? { suite_version: used.version } : {}),
        ...who,
        ...(values.baseline ? { baseline_run_id: values.baseline } : {}),
        ...(outputs ? { outputs } : {}),
        run_id: runId,
        ...sample,
      };
      total = outputs ? outputs.length : streamed ? streamed.count : null;
    }
    const now = io.now ?? Date.now;
    const started = now();
    const what = suites.length > 1 ? `gate: scoring ${total} outputs of ${suites.length} suites on the server` : total !== null ? `gate: scoring ${total} outputs on the server` : `gate: checking run ${runId}`;
    const progress = createProgress(io, values.json, what);
    let stopWatch = () => undefined as void;
    let gate: unknown;
    try {
      if (streamed && runId && 'suite_key' in body) {
        // The run first, streamed and completed; then the gate on it, as `--run-id` would (the same body without outputs).
        const opening = { run_id: runId, suite_key: body.suite_key, ...(body.suite_version !== undefined ? { suite_version: body.suite_version } : {}), subject_kind: body.subject_kind, subject_id: body.subject_id, ...(body.variant ? { variant: body.variant } : {}), ...(body.baseline_run_id ? { baseline_run_id: body.baseline_run_id } : {}), source: 'ci' as const };
        await sendStreamedOutputs(client, opening, streamed.file, streamed.count, progress, (error) => explainUnknownSuite(error, keys, client, io));
        progress.phase(what);
        stopWatch = progress === NO_PROGRESS ? stopWatch : watchRunProgress(client, runId, progress);
        const sealed = await sealStreamedRun(client, runId);
        if (sealed.status === 202) await waitForCompletedRun(client, runId, started + client.timeoutMs, progress, now);
      } else if (runId && total !== null && progress !== NO_PROGRESS) {
        stopWatch = watchRunProgress(client, runId, progress);
      }
      const answer = await client.post(url(client.endpoints.ingestion, '/v1/gate'), { json: body }).catch(async (error: unknown) => {
        throw withCaseOfField(await explainUnknownSuite(error, keys, client, io), sent);
      });
      stopWatch();
      gate = await untilVerdict(client, answer.body, started + client.timeoutMs, progress, now);
    } finally {
      stopWatch();
      progress.stop();
    }
    return emitReport(io, fromGate(gate, (now() - started) / 1000), gate, values);
  },
};

/**
 * A gate answer carries its verdict. Should the service ever answer before deciding (a `gate_id` without
 * `effective_verdict`, e.g. 202), the CLI polls `GET /v1/gate/:id` until it has one, within --timeout.
 */
export async function untilVerdict(client: ApiClient, first: unknown, deadline: number, progress: Progress, now: () => number): Promise<unknown> {
  let body = first;
  let delay = 250;
  for (;;) {
    const b = isObject(body) ? body : {};
    if (typeof b.effective_verdict === 'string') return body;
    if (typeof b.gate_id !== 'string') throw new CliError(EXIT.UNREACHABLE, 'the gate answered without a verdict or a gate id');
    if (now() > deadline) throw new UnreachableError(`gate ${b.gate_id} has no verdict yet; check later with: evals gate status ${b.gate_id}`);
    progress.phase(`gate ${b.gate_id}: waiting for the verdict`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 2000);
    body = (await client.get(url(client.endpoints.ingestion, `/v1/gate/${encodeURIComponent(b.gate_id)}`))).body;
  }
}
