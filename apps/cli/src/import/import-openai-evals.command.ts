import * as path from 'node:path';
import { oneOf, parseOptions, type Command } from '../command';
import { EVAL_CLASSES, importOpenAiEvals } from './openai-evals.importer';
import { IMPORT_EXIT_CODES, IMPORT_OPTIONS, IMPORT_OPTION_HELP, readSource, writeImportedSuite } from './write-suite';

const NAME = 'evals import openai-evals';

/** `evals import openai-evals FILE.jsonl --out SUITE.yaml [--eval CLASS]` (issue 29 part 2). */
export const importOpenAiEvalsCommand: Command = {
  name: 'import openai-evals',
  summary: 'Write a suite file from OpenAI Evals samples (Match, Includes, FuzzyMatch, JsonMatch).',
  usage: 'evals import openai-evals FILE.jsonl --out SUITE.yaml [--eval match|includes|fuzzy-match|json-match] [--ignore-case] [--key KEY] [--skip-unsupported]',
  options: [
    '--eval CLASS             the eval class: match (default, starts with an ideal), includes, fuzzy-match, json-match',
    '--ignore-case            includes: compare with case folding',
    ...IMPORT_OPTION_HELP,
  ],
  example: 'evals import openai-evals samples.jsonl --eval includes --out suites/capitals.suite.yaml',
  exitCodes: IMPORT_EXIT_CODES,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { ...IMPORT_OPTIONS, eval: { type: 'string' }, 'ignore-case': { type: 'boolean' } }, { min: 1, max: 1, names: 'samples FILE' });
    const evalClass = oneOf(values.eval, '--eval', EVAL_CLASSES, 'match');
    const file = path.resolve(io.cwd, positionals[0]);
    const imported = importOpenAiEvals(readSource(file, NAME), evalClass, values['ignore-case'] === true);
    return writeImportedSuite({ command: NAME, source: positionals[0], noun: 'sample', items: imported.items, leftOut: imported.leftOut }, values, io);
  },
};
