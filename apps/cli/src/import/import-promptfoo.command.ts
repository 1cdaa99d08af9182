import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseOptions, type Command } from '../command';
import { CliError, EXIT } from '../exit-codes';
import { importPromptfoo } from './promptfoo.importer';
import { IMPORT_EXIT_CODES, IMPORT_OPTIONS, IMPORT_OPTION_HELP, readSource, writeImportedSuite } from './write-suite';

const NAME = 'evals import promptfoo';

/** `evals import promptfoo CONFIG --out SUITE.yaml` (issue 29; docs/suites.md, "Importing"). */
export const importPromptfooCommand: Command = {
  name: 'import promptfoo',
  summary: 'Write a suite file from a promptfoo config: tests to cases, assertions to scorers.',
  usage: 'evals import promptfoo CONFIG --out SUITE.yaml [--key KEY] [--skip-unsupported]',
  options: IMPORT_OPTION_HELP,
  example: 'evals import promptfoo promptfooconfig.yaml --out suites/support.suite.yaml',
  exitCodes: IMPORT_EXIT_CODES,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, IMPORT_OPTIONS, { min: 1, max: 1, names: 'promptfoo CONFIG' });
    const file = path.resolve(io.cwd, positionals[0]);
    let imported;
    try {
      const config: unknown = file.endsWith('.json') ? JSON.parse(readSource(file, NAME)) : parseYaml(readSource(file, NAME));
      imported = importPromptfoo(config, file, (f) => readSource(f, NAME));
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(EXIT.USAGE, `${NAME}: ${positionals[0]}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return writeImportedSuite({ command: NAME, source: positionals[0], noun: 'test', ...(imported.title !== undefined ? { title: imported.title } : {}), items: imported.cases, leftOut: imported.leftOut, mapped: imported.mapped }, values, io);
  },
};
