import * as path from 'node:path';
import { parseOptions, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { formatRate, styles, type Styles } from '../format';
import { clientFor, isObject, url } from '../http';
import { loadCaseOutputs } from './jsonl';

/** The answer of `POST /v1/comparisons`: wins, losses, ties and position consistency with its interval (GT6). */
export function formatComparison(a: Record<string, unknown>, s: Styles): string {
  const pc = isObject(a.position_consistency) ? a.position_consistency : {};
  const usage = isObject(a.usage) ? a.usage : {};
  const consistency =
    typeof pc.n === 'number' && typeof pc.consistent === 'number' && typeof pc.lower === 'number' && typeof pc.upper === 'number'
      ? formatRate(pc.consistent, pc.n, pc.lower, pc.upper)
      : 'n/a';
  const lines = [
    s.bold(`pairwise comparison ${String(a.comparison_id)}: A = run ${String(a.run_a)}, B = run ${String(a.run_b)}; judge ${String(a.judge_model)} / ${String(a.prompt_version)}`),
    `A wins ${String(a.wins)}, B wins ${String(a.losses)}, ties ${String(a.ties)} (of which ${String(a.inconsistent_ties)} position-inconsistent: no winner), errors ${String(a.errors)}`,
    `${String(a.n)} case(s) decided of ${String(a.shared)} shared (${String(a.only_a)} only in A, ${String(a.only_b)} only in B, not compared)`,
    `position consistency ${consistency}`,
    s.dim(`judge calls ${String(usage.calls ?? 'n/a')} (each case twice, order swapped), tokens ${String(usage.input_tokens ?? 0)} in / ${String(usage.output_tokens ?? 0)} out, cost $${typeof usage.cost_usd === 'number' ? usage.cost_usd.toFixed(4) : 'n/a'}`),
  ];
  if (typeof pc.rate === 'number' && pc.rate < 0.8) lines.push(s.yellow('warning: the judge often changes its answer when the order changes; treat wins and losses with care'));
  return lines.join('\n');
}

/**
 * `evals compare` (J5, opt-in): the outputs of two runs judged pairwise on the service, each shared case
 * twice with the order swapped; a winner only when both orders agree. The outputs come from the operator's
 * files and are not kept by the service. Exit 0 when the comparison was made (it is a measurement, not a
 * verdict), 2 usage or refused input, 3 service unreachable.
 */
export const compareCommand: Command = {
  name: 'compare',
  service: true,
  summary: 'Compare two runs output by output with the judge, both orders, reporting position consistency (J5).',
  usage: 'evals compare --a FILE.jsonl --b FILE.jsonl --run-a ID --run-b ID [--rubric TEXT] [--json]',
  options: [
    '--a FILE.jsonl           outputs of run A: {case_id, output} per line (required)',
    '--b FILE.jsonl           outputs of run B (required); only cases in both are compared',
    '--run-a ID               run A (required)',
    '--run-b ID               run B (required)',
    "--rubric TEXT            compare against this rubric (default: each llm_judge case's own)",
    '--json                   print the API answer as JSON',
    ...SERVER_OPTION_HELP,
  ],
  example: 'evals compare --a candidate.outputs.jsonl --b baseline.outputs.jsonl --run-a ci-4711 --run-b ci-4700',
  async run(args, io) {
    const { values } = parseOptions(args, {
      a: { type: 'string' },
      b: { type: 'string' },
      'run-a': { type: 'string' },
      'run-b': { type: 'string' },
      rubric: { type: 'string' },
      json: { type: 'boolean' },
      ...SERVER_OPTIONS,
    });
    const outputsA = loadCaseOutputs(path.resolve(io.cwd, required(values.a, '--a')));
    const outputsB = loadCaseOutputs(path.resolve(io.cwd, required(values.b, '--b')));
    const body = {
      run_a: required(values['run-a'], '--run-a'),
      run_b: required(values['run-b'], '--run-b'),
      outputs_a: outputsA,
      outputs_b: outputsB,
      ...(values.rubric ? { rubric: values.rubric } : {}),
    };
    const client = clientFor(values, io, 600);
    const answer = await client.post(url(client.endpoints.regression, '/v1/comparisons'), { json: body });
    const report = isObject(answer.body) ? answer.body : {};
    if (values.json) io.out(JSON.stringify(report, null, 2));
    else io.out(formatComparison(report, styles(io.env, io.isTty)));
    return EXIT.PASS;
  },
};
