import type { Command } from '../command';

export type { Command, Io } from '../command';

/**
 * The registry of CLI commands, in the order `evals --help` lists them: each command's name, its one-line
 * summary and how to load it. The CLI loads only the command it runs (issue 15: `evals --help` and `evals run`
 * no longer load every command's modules down to libs/domain and libs/contracts). One file per command
 * (`<name>.command.ts`), each exporting one `Command`; a command name is one or two words (`gate`,
 * `gate status`). To add a command, add its entry here and to ./all.ts; a unit test checks that each entry's
 * name and summary are its command's.
 */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

// `require`, not `import()`: the sources are CommonJS (swc, and dist/), and TypeScript's node16 resolution
// would take `import()` for an ES module import needing file extensions.
export const COMMAND_INDEX: readonly CommandEntry[] = [
  { name: 'suite validate', summary: 'Validate a suite file; every problem is named with file, line, case and field.', load: async () => (require('./suite-validate.command') as typeof import('./suite-validate.command')).suiteValidateCommand },
  { name: 'suite push', summary: 'Push a suite file to the service: prints the version, created or existing (V2, V3).', load: async () => (require('./suite-push.command') as typeof import('./suite-push.command')).suitePushCommand },
  { name: 'score', summary: 'Score outputs against a suite locally (nothing stored), optionally against a baseline.', load: async () => (require('./score.command') as typeof import('./score.command')).scoreCommand },
  { name: 'run', summary: 'Score an outputs file on the service: the run table and the regression comparison.', load: async () => (require('./run.command') as typeof import('./run.command')).runCommand },
  { name: 'gate', summary: 'Run the regression gate (POST /v1/gate): a blocking CI verdict, exit 0 pass / 1 fail.', load: async () => (require('./gate.command') as typeof import('./gate.command')).gateCommand },
  { name: 'gate status', summary: 'Show a recorded gate; the exit code follows its effective verdict (after any override).', load: async () => (require('./gate-status.command') as typeof import('./gate-status.command')).gateStatusCommand },
  { name: 'override', summary: 'Override a failed gate with a written reason (admin tier, audited, GT5).', load: async () => (require('./override.command') as typeof import('./override.command')).overrideCommand },
  { name: 'baseline pin', summary: 'Pin a completed run as the baseline of a suite and subject (G5).', load: async () => (require('./baseline-pin.command') as typeof import('./baseline-pin.command')).baselinePinCommand },
  { name: 'baseline list', summary: 'List pinned baselines, optionally of one suite or subject.', load: async () => (require('./baseline-list.command') as typeof import('./baseline-list.command')).baselineListCommand },
  { name: 'scorecard', summary: 'Scorecards per suite and subject: pass rate with CI, mean score, trend (table, CSV or JSON).', load: async () => (require('./scorecard.command') as typeof import('./scorecard.command')).scorecardCommand },
  { name: 'project create', summary: 'Create a project: suites, runs, baselines and gates that only its keys see (platform admin; issue 30).', load: async () => (require('./project.command') as typeof import('./project.command')).projectCreateCommand },
  { name: 'project list', summary: 'List the projects the key may act in: its own, or every one for a platform key (issue 30).', load: async () => (require('./project.command') as typeof import('./project.command')).projectListCommand },
  { name: 'label', summary: 'Label outputs pass/fail by hand, one at a time, to build a calibration set for the judge (J4).', load: async () => (require('../judge/label.command') as typeof import('../judge/label.command')).labelCommand },
  { name: 'calibrate', summary: 'Measure the judge against human labels and certify it, or not (J4).', load: async () => (require('../judge/calibrate.command') as typeof import('../judge/calibrate.command')).calibrateCommand },
  { name: 'compare', summary: 'Compare two runs output by output with the judge, both orders, reporting position consistency (J5).', load: async () => (require('../judge/compare.command') as typeof import('../judge/compare.command')).compareCommand },
  { name: 'import promptfoo', summary: 'Write a suite file from a promptfoo config: tests to cases, assertions to scorers.', load: async () => (require('../import/import-promptfoo.command') as typeof import('../import/import-promptfoo.command')).importPromptfooCommand },
  { name: 'import openai-evals', summary: 'Write a suite file from OpenAI Evals samples (Match, Includes, FuzzyMatch, JsonMatch).', load: async () => (require('../import/import-openai-evals.command') as typeof import('../import/import-openai-evals.command')).importOpenAiEvalsCommand },
  { name: 'import dataset', summary: 'Write a suite file from a JSONL or CSV dataset (LangSmith, Braintrust exports).', load: async () => (require('../import/import-dataset.command') as typeof import('../import/import-dataset.command')).importDatasetCommand },
  { name: 'demo', summary: 'The whole path on the embedded service: suite, baseline, regressed candidate, gate, finding, scorecard.', load: async () => (require('./demo.command') as typeof import('./demo.command')).demoCommand },
  { name: 'serve', summary: 'Run the whole service in one process on the embedded default (no servers needed).', load: async () => (require('./serve.command') as typeof import('./serve.command')).serveCommand },
];

/** The command named by the first one or two arguments: `gate status X` is `gate status`, `gate --suite` is `gate`. */
export function findCommand<T extends { readonly name: string }>(args: readonly string[], commands: readonly T[] = COMMAND_INDEX as unknown as readonly T[]): { command: T; rest: string[] } | undefined {
  const two = args.length >= 2 ? `${args[0]} ${args[1]}` : undefined;
  const byTwo = two !== undefined ? commands.find((c) => c.name === two) : undefined;
  if (byTwo) return { command: byTwo, rest: args.slice(2) };
  const byOne = commands.find((c) => c.name === args[0]);
  if (byOne) return { command: byOne, rest: args.slice(1) };
  return undefined;
}

/** Names are unique: checked by the unit tests, so a second registration cannot shadow a command. */
export function commandNames(commands: readonly { readonly name: string }[] = COMMAND_INDEX): string[] {
  return commands.map((c) => c.name);
}
