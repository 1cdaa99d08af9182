import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { integerOption, parseOptions, REPORT_OPTION_HELP, REPORT_OPTIONS, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { emitReport } from '../emit';
import { clientFor, isObject, url, type ApiClient } from '../http';
import { loadOutputList, withCaseOfField } from '../outputs-file';
import { createProgress, NO_PROGRESS } from '../progress';
import { fitsInline, scanOutputs, sealStreamedRun, sendStreamedOutputs } from '../streamed-run';
import { fromRunView } from '../report';
import { classifySuite, explainUnknownSuite, useSuite, useSuiteVersionWithFile } from '../suite-arg';
import { waitForCompletedRun, watchRunProgress } from '../run-watch';

/**
 * `evals run` (R5, G1-G5): sends an outputs file to `POST /v1/runs` with source `ci`, waits for the scored
 * and compared run, prints the run table and the regression comparison. Exit 1 when the run is below its
 * pass threshold (R2) or regressed against its baseline (G2).
 */
export const runCommand: Command = {
  name: 'run',
  service: true,
  summary: 'Score an outputs file on the service: the run table and the regression comparison.',
  usage:
    'evals run --suite KEY|FILE --outputs FILE.jsonl --subject-id ID [--subject-kind KIND] [--suite-version N] [--variant V] [--baseline RUN] [--run-id ID] [--json] [--junit FILE] [--summary FILE]',
  options: [
    '--suite KEY|FILE         suite key, or a suite file: pushed first (idempotent) and its version used (required)',
    '--outputs FILE.jsonl     {"case_id", "output"} objects: JSON Lines, a JSON array or pretty-printed (required)',
    '--subject-id ID          the agent (or other subject) the outputs come from (required)',
    '--subject-kind KIND      default agent',
    '--suite-version N        with a key; default: the latest version',
    '--variant V              e.g. a prompt version; the automatic baseline is the same variant (G4)',
    '--baseline RUN           explicit baseline run id (beats a pinned one, G5)',
    '--run-id ID              idempotency key: the same id again returns the same run (default: cli-<uuid>)',
    ...REPORT_OPTION_HELP,
    ...SERVER_OPTION_HELP,
    '                         (default --timeout for a run: 600 s)',
  ],
  example:
    'evals run --suite examples/support-triage.suite.yaml --outputs examples/support-triage.good.outputs.jsonl --subject-id support-bot --variant prompt-v7 --junit reports/evals.xml --summary "$GITHUB_STEP_SUMMARY"',
  async run(args, io) {
    const { values } = parseOptions(args, {
      suite: { type: 'string' },
      'suite-version': { type: 'string' },
      outputs: { type: 'string' },
      'subject-kind': { type: 'string' },
      'subject-id': { type: 'string' },
      variant: { type: 'string' },
      baseline: { type: 'string' },
      'run-id': { type: 'string' },
      ...REPORT_OPTIONS,
      ...SERVER_OPTIONS,
    });
    const suiteArg = classifySuite(required(values.suite, '--suite'), io.cwd);
    const outputsFile = required(values.outputs, '--outputs');
    const subjectId = required(values['subject-id'], '--subject-id');
    const versionFlag = integerOption(values['suite-version'], '--suite-version', 1);
    if (suiteArg.kind === 'file' && versionFlag !== undefined) useSuiteVersionWithFile();
    const client = clientFor(values, io, 600);
    // Every limit is checked before anything is sent, the suite push included. Above the inline cap the
    // outputs are streamed from the file in batches (streamed-run.ts), never all in memory.
    const file = path.resolve(io.cwd, outputsFile);
    const scan = scanOutputs(file);
    const outputs = fitsInline(scan) ? loadOutputList(file) : null;
    const { key: suiteKey, version: suiteVersion } = await useSuite(suiteArg, versionFlag, client, io, 'run');
    const runId = values['run-id'] ?? `cli-${randomUUID()}`;
    const body = {
      run_id: runId,
      suite_key: suiteKey,
      ...(suiteVersion !== undefined ? { suite_version: suiteVersion } : {}),
      subject_kind: values['subject-kind'] ?? 'agent',
      subject_id: subjectId,
      ...(values.variant ? { variant: values.variant } : {}),
      ...(values.baseline ? { baseline_run_id: values.baseline } : {}),
      source: 'ci' as const,
    };
    const now = io.now ?? Date.now;
    const started = now();
    const deadline = started + client.timeoutMs;
    const progress = createProgress(io, values.json, `scoring ${scan.count} outputs on the server`);
    let stopWatch = () => undefined as void;
    let view: unknown;
    try {
      let answer: { status: number; body: unknown };
      if (outputs) {
        stopWatch = progress === NO_PROGRESS ? stopWatch : watchRunProgress(client, runId, progress);
        answer = await client.post(url(client.endpoints.ingestion, '/v1/runs'), { json: { ...body, outputs } }).catch(async (error: unknown) => {
          throw withCaseOfField(await explainUnknownSuite(error, [suiteKey], client, io), [outputs]);
        });
      } else {
        await sendStreamedOutputs(client, body, file, scan.count, progress, (error) => explainUnknownSuite(error, [suiteKey], client, io));
        progress.phase(`scoring ${scan.count} outputs on the server`);
        stopWatch = progress === NO_PROGRESS ? stopWatch : watchRunProgress(client, runId, progress);
        answer = await sealStreamedRun(client, runId);
      }
      stopWatch();
      view = answer.status === 202 ? await waitForCompletedRun(client, runId, deadline, progress, now) : answer.body;
    } finally {
      stopWatch();
      progress.stop();
    }
    const cases = await fetchCases(client, runId, Boolean(values.junit || values.summary), Boolean(values.json));
    const report = fromRunView(view, cases, (now() - started) / 1000);
    return emitReport(io, report, view, values);
  },
};

/**
 * The per-case results come from the read model (`?include=cases`). Needed for --junit and --summary (then
 * a failure to get them is an error, exit 2 or 3); for the table they are a courtesy (failing case ids).
 */
async function fetchCases(client: ApiClient, runId: string, needed: boolean, json: boolean): Promise<unknown[] | null> {
  if (!needed && json) return null;
  try {
    const answer = await client.get(url(client.endpoints.read, `/v1/runs/${encodeURIComponent(runId)}`, { include: 'cases' }), needed ? {} : { timeoutMs: 5000 });
    return isObject(answer.body) && Array.isArray(answer.body.cases) ? answer.body.cases : null;
  } catch (error) {
    if (needed) throw error;
    return null;
  }
}
