import * as path from 'node:path';
import { integerOption, parseOptions, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { CliError, EXIT, UsageError } from '../exit-codes';
import { classifySuite, useSuite } from '../suite-arg';
import { formatRate, styles, table, type Styles } from '../format';
import type { Schemas } from '../api/api-types';
import { clientFor, isObject, url } from '../http';
import { latestLabels, loadItems, loadLabels, sha256Hex } from './jsonl';

/** D4: what the service keeps of a golden output; longer ones are sent again with every calibration. */
const GOLDEN_MAX_CHARS = 4_000;

function target(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} must be a number`);
  return n;
}

interface RateLike {
  value: number | null;
  numerator: number;
  denominator: number;
  lower: number;
  upper: number;
}

function rate(r: unknown): string {
  if (!isObject(r)) return 'n/a';
  const x = r as unknown as RateLike;
  return formatRate(x.numerator, x.denominator, x.lower, x.upper);
}

function num(v: unknown, digits = 3): string {
  return typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : 'n/a';
}

function signed(v: unknown): string {
  return typeof v === 'number' && Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(3)}` : 'n/a';
}

/**
 * A set refused before any judge call (J4): too few items, too few in a human class, or one class only. Says
 * what the set has, what it needs, and that nothing was spent.
 */
function formatInsufficient(answer: Record<string, unknown>, report: Record<string, unknown>, s: Styles): string {
  const set = isObject(report.set) ? report.set : {};
  const reasons = Array.isArray(report.reasons) ? report.reasons.join(', ') : '';
  return [
    s.bold(`calibration ${String(answer.report_id)} of set ${String(answer.set_id)}: judge ${String(answer.judge_model)} / ${String(answer.prompt_version)}, scope ${String(answer.scope ?? report.scope)}`),
    `set: ${String(set.n)} labelled item(s) - ${String(set.human_pass)} pass, ${String(set.human_fail)} fail; a set certifies only with at least ${String(set.min_items)} items and ${String(set.min_per_class)} of each class`,
    'the judge was not called: nothing was spent, nothing certified; label more items (evals label) and run evals calibrate again',
    `status: ${s.yellow('INSUFFICIENT SET')}${reasons ? ` (${reasons})` : ''}`,
  ].join('\n');
}

/** The report of `POST /v1/calibrations` as a table: every rate with its denominator and 95% interval (GT6). */
export function formatCalibration(answer: Record<string, unknown>, s: Styles): string {
  const report = isObject(answer.report) ? answer.report : {};
  if ((answer.status ?? report.status) === 'insufficient_set') return formatInsufficient(answer, report, s);
  const targets = isObject(report.targets) ? report.targets : {};
  const kappa = isObject(report.kappa) ? report.kappa : {};
  const bias = isObject(report.verbosity_bias) ? report.verbosity_bias : {};
  const judgeBias = isObject(bias.judge) ? bias.judge : {};
  const humanBias = isObject(bias.human) ? bias.human : {};
  const judge = isObject(report.judge) ? report.judge : {};
  const counts = isObject(report.counts) ? report.counts : {};
  const kappaText =
    typeof kappa.value === 'number'
      ? `${kappa.value.toFixed(3)} (observed ${num(kappa.observed)}, chance ${num(kappa.expected)})`
      : `undefined${typeof kappa.reason === 'string' ? ` (${kappa.reason})` : ''}`;
  const rows: string[][] = [
    ['metric', 'value', 'target'],
    [
      'agreement',
      rate(report.agreement),
      typeof targets.agreement === 'number' ? `${targets.agreement_basis === 'lower_bound' ? 'lower bound ' : ''}>= ${(targets.agreement * 100).toFixed(1)}%` : '',
    ],
    ["Cohen's kappa", kappaText, typeof targets.kappa === 'number' ? `>= ${targets.kappa.toFixed(2)}` : ''],
    ['sensitivity', rate(report.sensitivity), 'judge passes / human passes'],
    ['specificity', rate(report.specificity), 'judge fails / human fails'],
    ['human pass rate', rate(report.human_pass_rate), ''],
    ['judge pass rate', rate(report.judge_pass_rate), ''],
    ['verbosity (judge)', `r = ${num(judgeBias.r)} (n ${String(judgeBias.n ?? 'n/a')})`, 'output length vs verdict'],
    ['verbosity (human)', `r = ${num(humanBias.r)} (n ${String(humanBias.n ?? 'n/a')})`, `excess ${signed(bias.excess)}`],
  ];
  const status = String(answer.status ?? report.status ?? 'unknown');
  const reasons = Array.isArray(report.reasons) && report.reasons.length > 0 ? ` (${report.reasons.join(', ')})` : '';
  const shown = status === 'certified' ? s.green('CERTIFIED') : status === 'not_certifiable' ? s.yellow('NOT CERTIFIABLE') : s.red('NOT CERTIFIED');
  return [
    s.bold(`calibration ${String(answer.report_id)} of set ${String(answer.set_id)}: judge ${String(answer.judge_model)} / ${String(answer.prompt_version)}${answer.scope ? `, scope ${String(answer.scope)}` : ''}`),
    table(rows),
    `counts: tp ${String(counts.tp)}, fn ${String(counts.fn)}, fp ${String(counts.fp)}, tn ${String(counts.tn)} (human label is the reference, pass is positive)`,
    `judge calls ${String(judge.calls ?? 'n/a')} (unparseable ${String(judge.unparseable ?? 0)}), tokens ${String(judge.input_tokens ?? 0)} in / ${String(judge.output_tokens ?? 0)} out, cost $${num(judge.cost_usd, 4)}`,
    `status: ${shown}${reasons}`,
  ].join('\n');
}

/**
 * `evals calibrate` (J4): turns a labels file (from `evals label`) and its items file into a calibration set
 * on the service (`POST /v1/calibration-sets`: hashes, lengths and labels - the text only with `--golden`,
 * D4) and runs the calibration (`POST /v1/calibrations`, the outputs sent along for the judge and not kept).
 * Exit 0 certified, 1 not certified (or a set too small to certify: `insufficient_set`, no judge call), 2 usage or refused input (e.g. a lowered target),
 * 3 service unreachable.
 */
export const calibrateCommand: Command = {
  name: 'calibrate',
  service: true,
  summary: 'Measure the judge against human labels and certify it, or not (J4).',
  usage:
    'evals calibrate --labels LABELS.jsonl --items FILE.jsonl (--rubric TEXT | --suite KEY [--suite-version N]) [--golden] [--name NAME] [--target-agreement X] [--target-kappa Y] [--min-items N] [--min-per-class N] [--on-lower-bound] [--json]',
  options: [
    '--labels LABELS.jsonl    answers from evals label (required; skips are left out)',
    '--items FILE.jsonl       the labelled items, with their outputs (required)',
    '--rubric TEXT            the rubric the items were labelled against',
    '--suite KEY|FILE         or: items carry case_id of llm_judge cases of this suite (their rubric, input, expected)',
    '--suite-version N        the suite version (default: latest)',
    '--golden                 store the outputs with the set (golden, non-production fixtures only - D4)',
    '--name NAME              name of the set (default: the labels file name)',
    '--target-agreement X     raise the agreement target (minimum 0.85; lower is refused)',
    '--target-kappa Y         raise the kappa target (minimum 0.6; lower is refused)',
    '--min-items N            raise the labelled items a set needs to certify (minimum 50)',
    '--min-per-class N        raise the items each human class (pass, fail) needs (minimum 10)',
    '--on-lower-bound         certify on the lower bound of the agreement interval, not its point estimate',
    '--json                   print the API answer as JSON',
    ...SERVER_OPTION_HELP,
  ],
  example: 'evals calibrate --labels triage.labels.jsonl --items triage.items.jsonl --rubric "Routes the ticket to the right team" --target-agreement 0.9',
  async run(args, io) {
    const { values } = parseOptions(args, {
      labels: { type: 'string' },
      items: { type: 'string' },
      rubric: { type: 'string' },
      suite: { type: 'string' },
      'suite-version': { type: 'string' },
      golden: { type: 'boolean' },
      name: { type: 'string' },
      'target-agreement': { type: 'string' },
      'target-kappa': { type: 'string' },
      'min-items': { type: 'string' },
      'min-per-class': { type: 'string' },
      'on-lower-bound': { type: 'boolean' },
      json: { type: 'boolean' },
      ...SERVER_OPTIONS,
    });
    if (!values.labels || !values.items) throw new UsageError('--labels and --items are required');
    if (!values.rubric && !values.suite) throw new UsageError('give --rubric TEXT, or --suite KEY whose llm_judge cases carry the rubric');
    const suiteVersion = integerOption(values['suite-version'], '--suite-version', 1);
    if (suiteVersion !== undefined && !values.suite) throw new UsageError('--suite-version and --suite go together');
    const agreement = target(values['target-agreement'], '--target-agreement');
    const kappa = target(values['target-kappa'], '--target-kappa');
    const minItems = integerOption(values['min-items'], '--min-items', 1);
    const minPerClass = integerOption(values['min-per-class'], '--min-per-class', 1);

    const labelsFile = path.resolve(io.cwd, values.labels);
    const items = new Map(loadItems(path.resolve(io.cwd, values.items)).map((i) => [i.item_id, i]));
    const labels = [...latestLabels(loadLabels(labelsFile, { mustExist: true })).values()].filter((l) => l.human_verdict !== 'skip');
    if (labels.length === 0) throw new CliError(EXIT.USAGE, `${values.labels}: no pass/fail labels to calibrate with`);
    const golden = values.golden === true;
    const setItems: Array<Schemas['CalibrationItemBody']> = [];
    const outputs: Array<Schemas['CalibrationOutputBody']> = [];
    for (const label of labels) {
      const item = items.get(label.item_id);
      if (!item) throw new CliError(EXIT.USAGE, `${values.labels}: item ${label.item_id} is not in ${values.items}`);
      // The judge must grade the very output the human labelled.
      if (sha256Hex(item.output) !== label.output_hash) throw new CliError(EXIT.USAGE, `item ${label.item_id}: its output changed since it was labelled; label it again (evals label)`);
      setItems.push({
        item_id: item.item_id,
        ...(item.case_id ? { case_id: item.case_id } : {}),
        output_hash: label.output_hash,
        // `skip` labels were filtered out above.
        human_verdict: label.human_verdict as 'pass' | 'fail',
        output_chars: item.output.length,
        ...(golden ? { golden_output: item.output, ...(item.input !== undefined ? { golden_input: item.input } : {}) } : {}),
      });
      if (!golden || item.output.length > GOLDEN_MAX_CHARS) outputs.push({ item_id: item.item_id, output: item.output, ...(item.input !== undefined ? { input: item.input } : {}) });
    }

    const client = clientFor(values, io, 600);
    // A suite file is pushed first (idempotent) and the version it became is the set's suite.
    const suite = values.suite ? await useSuite(classifySuite(values.suite, io.cwd), suiteVersion, client, io, 'calibrate') : undefined;
    const base = client.endpoints.regression;
    const created = await client.post(url(base, '/v1/calibration-sets'), {
      json: {
        name: values.name ?? path.basename(labelsFile).replace(/\.jsonl?$/i, ''),
        golden,
        ...(values.rubric ? { rubric: values.rubric } : {}),
        ...(suite ? { suite_key: suite.key } : {}),
        ...(suite?.version !== undefined ? { suite_version: suite.version } : {}),
        items: setItems,
      },
    });
    const set: Partial<typeof created.body.set> = isObject(created.body) && isObject(created.body.set) ? created.body.set : {};
    const targets = {
      ...(agreement !== undefined ? { agreement } : {}),
      ...(kappa !== undefined ? { kappa } : {}),
      ...(minItems !== undefined ? { min_items: minItems } : {}),
      ...(minPerClass !== undefined ? { min_per_class: minPerClass } : {}),
      ...(values['on-lower-bound'] ? { agreement_basis: 'lower_bound' as const } : {}),
    };
    const answer = await client.post(url(base, '/v1/calibrations'), {
      json: { set_id: set.id as string, ...(Object.keys(targets).length > 0 ? { targets } : {}), ...(outputs.length > 0 ? { outputs } : {}) },
    });
    const body: Partial<typeof answer.body> = isObject(answer.body) ? answer.body : {};
    if (values.json) io.out(JSON.stringify(body, null, 2));
    else io.out(formatCalibration(body, styles(io.env, io.isTty)));
    return body.status === 'certified' ? EXIT.PASS : EXIT.FAILED;
  },
};
