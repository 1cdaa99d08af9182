import { parseOptions, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { styles } from '../format';
import { suiteKeyOf } from '../suite-arg';
import { clientFor, isObject, url } from '../http';

/**
 * `evals baseline pin` (G5): pins a completed run as the baseline of a suite, subject (and variant), on the
 * regression app (`POST /v1/baselines`). An explicit `--baseline` on a run still beats the pin; the pin beats
 * the automatic choice.
 */
export const baselinePinCommand: Command = {
  name: 'baseline pin',
  service: true,
  summary: 'Pin a completed run as the baseline of a suite and subject (G5).',
  usage: 'evals baseline pin --suite KEY|FILE --subject-id ID --run RUN [--subject-kind KIND] [--variant V] [--json]',
  options: [
    '--suite KEY|FILE         suite key, or a suite file standing for its key (required)',
    '--subject-id ID          subject (required)',
    '--run RUN                the completed run to pin (required)',
    '--subject-kind KIND      default agent',
    '--variant V              pin for this variant only',
    '--json                   print the API answer as JSON',
    ...SERVER_OPTION_HELP,
  ],
  example: 'evals baseline pin --suite support-triage --subject-kind agent --subject-id support-bot --run ci-4700',
  async run(args, io) {
    const { values } = parseOptions(args, {
      suite: { type: 'string' },
      'subject-kind': { type: 'string' },
      'subject-id': { type: 'string' },
      variant: { type: 'string' },
      run: { type: 'string' },
      json: { type: 'boolean' },
      ...SERVER_OPTIONS,
    });
    const body = {
      suite_key: suiteKeyOf(required(values.suite, '--suite'), io.cwd)!,
      subject_kind: values['subject-kind'] ?? 'agent',
      subject_id: required(values['subject-id'], '--subject-id'),
      ...(values.variant ? { variant: values.variant } : {}),
      run_id: required(values.run, '--run'),
    };
    const client = clientFor(values, io, 60);
    const answer = await client.post(url(client.endpoints.regression, '/v1/baselines'), { json: body });
    if (values.json) {
      io.out(JSON.stringify(answer.body, null, 2));
      return EXIT.PASS;
    }
    const pin = isObject(answer.body) && isObject(answer.body.pin) ? answer.body.pin : body;
    const s = styles(io.env, io.isTty);
    io.out(`${s.green('pinned')} run ${String(pin.run_id)} as the baseline of ${String(pin.suite_key)} for ${String(pin.subject_kind)}/${String(pin.subject_id)}${pin.variant ? ` variant ${String(pin.variant)}` : ' (any variant)'}`);
    return EXIT.PASS;
  },
};
