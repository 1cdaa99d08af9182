import { parseOptions, REPORT_OPTION_HELP, REPORT_OPTIONS, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { emitReport } from '../emit';
import { CliError, EXIT } from '../exit-codes';
import { clientFor, isObject, url } from '../http';
import { fromGate } from '../report';

/**
 * `evals gate status ID` (GT5): reads a recorded gate (`GET /v1/gate/:id`) and exits by its EFFECTIVE
 * verdict - the recorded one, or the one an audited override set. This is what CI re-checks after an
 * override.
 */
export const gateStatusCommand: Command = {
  name: 'gate status',
  service: true,
  summary: 'Show a recorded gate; the exit code follows its effective verdict (after any override).',
  usage: 'evals gate status GATE_ID [--json] [--junit FILE] [--summary FILE]',
  options: [...REPORT_OPTION_HELP, ...SERVER_OPTION_HELP],
  example: 'evals gate status 8f1c2a4e-0b1d-4c55-9a8e-3f0e6f1d2c3b',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { ...REPORT_OPTIONS, ...SERVER_OPTIONS }, { min: 1, max: 1, names: 'GATE_ID' });
    const client = clientFor(values, io, 60);
    const answer = await client.get(url(client.endpoints.ingestion, `/v1/gate/${encodeURIComponent(positionals[0])}`));
    if (!isObject(answer.body) || typeof answer.body.effective_verdict !== 'string') throw new CliError(EXIT.UNREACHABLE, `gate ${positionals[0]} has no verdict yet`);
    return emitReport(io, fromGate(answer.body), answer.body, values);
  },
};
