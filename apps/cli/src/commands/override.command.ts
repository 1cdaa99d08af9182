import { parseOptions, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { styles } from '../format';
import { clientFor, isObject, url } from '../http';

/**
 * `evals override GATE_ID --reason TEXT` (GT5): the governed way out of a failed gate - admin tier, a
 * written reason, audited by the service. It changes the effective verdict, never the recorded one; CI then
 * re-checks with `evals gate status`. Exit 0 when the override is recorded.
 */
export const overrideCommand: Command = {
  name: 'override',
  service: true,
  summary: 'Override a failed gate with a written reason (admin tier, audited, GT5).',
  usage: 'evals override GATE_ID --reason TEXT [--json]',
  options: ['--reason TEXT            why (required; the service asks for at least 20 characters)', '--json                   print the API answer as JSON', ...SERVER_OPTION_HELP],
  example: 'EVALS_API_KEY=$ADMIN_KEY evals override 8f1c2a4e-0b1d-4c55-9a8e-3f0e6f1d2c3b --reason "known flaky judge cases, tracked in QA-812; release approved by QA lead"',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { reason: { type: 'string' }, json: { type: 'boolean' }, ...SERVER_OPTIONS }, { min: 1, max: 1, names: 'GATE_ID' });
    const reason = required(values.reason, '--reason');
    const client = clientFor(values, io, 60);
    const answer = await client.post(url(client.endpoints.ingestion, `/v1/gate/${encodeURIComponent(positionals[0])}/override`), { json: { reason } });
    if (values.json) {
      io.out(JSON.stringify(answer.body, null, 2));
      return EXIT.PASS;
    }
    const gate: Partial<typeof answer.body> = isObject(answer.body) ? answer.body : {};
    const s = styles(io.env, io.isTty);
    const effective = typeof gate.effective_verdict === 'string' ? gate.effective_verdict : undefined;
    const recorded = typeof gate.recorded_verdict === 'string' ? gate.recorded_verdict : undefined;
    io.out(
      `${s.bold(`gate ${positionals[0]}`)}: override recorded` +
        (effective ? `; effective verdict ${effective === 'pass' ? s.green(effective) : s.red(effective)}` : '') +
        (recorded ? `, recorded verdict ${recorded} (unchanged)` : '') +
        `\n  re-check: evals gate status ${positionals[0]}`,
    );
    return EXIT.PASS;
  },
};
