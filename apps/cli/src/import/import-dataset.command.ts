import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseOptions, type Command } from '../command';
import { CliError, EXIT, UsageError } from '../exit-codes';
import { importDataset, readDatasetRows } from './dataset.importer';
import { IMPORT_EXIT_CODES, IMPORT_OPTIONS, IMPORT_OPTION_HELP, readSource, writeImportedSuite } from './write-suite';

const NAME = 'evals import dataset';

/** `--scorer exact` or `--scorer '{type: contains, ignore_case: true}'`. */
function scorerOption(value: string | undefined): Record<string, unknown> {
  if (value === undefined) return { type: 'exact' };
  if (/^[a-z_]+$/.test(value)) return { type: value };
  let parsed: unknown;
  try {
    parsed = parseYaml(value);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--scorer must be a scorer name (exact) or a mapping ({type: contains, ignore_case: true})');
  return parsed as Record<string, unknown>;
}

/** `evals import dataset FILE --out SUITE.yaml` (issue 29 part 2): LangSmith, Braintrust, any JSONL or CSV. */
export const importDatasetCommand: Command = {
  name: 'import dataset',
  summary: 'Write a suite file from a JSONL or CSV dataset (LangSmith, Braintrust exports).',
  usage: 'evals import dataset FILE --out SUITE.yaml [--input COL] [--expected COL] [--id COL] [--metadata COL]... [--scorer TYPE|SPEC] [--key KEY] [--skip-unsupported]',
  options: [
    '--input COL              the input column, a dotted path (default: input, inputs, question or prompt)',
    '--expected COL           the expected column (default: expected, expected_output, outputs, output, answer or ideal)',
    '--id COL                 the case id column, used when valid and unique (default: id; else row-N)',
    '--metadata COL           a column whose scalar values become tags key:value (repeatable; default: metadata)',
    '--scorer TYPE|SPEC       the default scorer: a name or a mapping (default: exact)',
    ...IMPORT_OPTION_HELP,
  ],
  example: 'evals import dataset langsmith.jsonl --expected outputs.answer --scorer "{type: contains, ignore_case: true}" --out suites/qa.suite.yaml',
  exitCodes: IMPORT_EXIT_CODES,
  async run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { ...IMPORT_OPTIONS, input: { type: 'string' }, expected: { type: 'string' }, id: { type: 'string' }, metadata: { type: 'string', multiple: true }, scorer: { type: 'string' } },
      { min: 1, max: 1, names: 'dataset FILE' },
    );
    const defaultScorer = scorerOption(values.scorer);
    const file = path.resolve(io.cwd, positionals[0]);
    let rows: unknown[];
    try {
      rows = readDatasetRows(readSource(file, NAME), file);
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(EXIT.USAGE, `${NAME}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const columns = {
      ...(values.input !== undefined ? { input: values.input } : {}),
      ...(values.expected !== undefined ? { expected: values.expected } : {}),
      ...(values.id !== undefined ? { id: values.id } : {}),
      ...(values.metadata !== undefined ? { metadata: values.metadata } : {}),
    };
    const imported = importDataset(rows, columns);
    return writeImportedSuite({ command: NAME, source: positionals[0], noun: 'row', items: imported.items, leftOut: imported.leftOut, defaultScorer }, values, io);
  },
};
