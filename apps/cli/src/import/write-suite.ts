/**
 * The end every `evals import` shares: refuse (exit 2) when something was left out and --skip-unsupported is
 * not given, else write the suite file after the same validation as `evals suite validate`, and report.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseSuiteYaml } from '@evals/domain';
import type { Io } from '../command';
import { CliError, EXIT, UsageError } from '../exit-codes';
import { SuiteRefused } from '../local-evaluation';
import { assignIds, describeLeftOut, keyFrom, suiteDocument, suiteYaml, type ImportedCase, type LeftOut } from './suite-file';

export interface ImportOutcome {
  readonly command: string;
  readonly source: string;
  /** `test` (promptfoo), `sample` (OpenAI Evals), `row` (datasets): the report's word and the fallback id prefix. */
  readonly noun: 'test' | 'sample' | 'row';
  readonly title?: string;
  readonly items: readonly (({ readonly name?: string } & ImportedCase) | undefined)[];
  readonly leftOut: readonly LeftOut[];
  readonly mapped?: ReadonlyMap<string, number>;
  readonly defaultScorer?: Readonly<Record<string, unknown>>;
}

export const IMPORT_OPTIONS = {
  out: { type: 'string' },
  key: { type: 'string' },
  'skip-unsupported': { type: 'boolean' },
} as const;

export const IMPORT_OPTION_HELP = [
  '--out FILE               the suite file to write (required)',
  '--key KEY                the suite key (default: from the source title or file name)',
  '--skip-unsupported       leave out what cannot be imported, listed, and exit 0 (default: exit 2, nothing written)',
] as const;

export const IMPORT_EXIT_CODES = 'exit codes: 0 written, 2 something cannot be imported (without --skip-unsupported), a bad option or file';

export function writeImportedSuite(outcome: ImportOutcome, values: { out?: string; key?: string; 'skip-unsupported'?: boolean }, io: Io): number {
  const out = values.out;
  if (out === undefined || out.trim() === '') throw new UsageError('--out FILE is required');
  const report = describeLeftOut(outcome.leftOut, outcome.noun);
  if (outcome.leftOut.length > 0 && values['skip-unsupported'] !== true) {
    io.err(`${outcome.command}: ${outcome.leftOut.length} thing(s) in ${outcome.source} cannot be imported; nothing written (--skip-unsupported leaves them out):`);
    for (const line of report) io.err(line);
    return EXIT.USAGE;
  }
  const kept = outcome.items.map((c, i) => ({ c, i })).filter((x): x is { c: NonNullable<typeof x.c>; i: number } => x.c !== undefined);
  if (kept.length === 0) throw new CliError(EXIT.USAGE, `${outcome.command}: no case left to write from ${outcome.source}`);
  const ids = assignIds(outcome.items.map((c) => c?.name), outcome.noun);
  const key = values.key ?? keyFrom(outcome.title ?? '') ?? keyFrom(path.basename(outcome.source).replace(/\.[^.]*$/, ''));
  if (key === undefined || keyFrom(key) !== key) throw new UsageError(`--key KEY is required: no suite key can be made from ${outcome.source} (lowercase letters, digits, . _ -)`);
  const cases = kept.map(({ c, i }) => {
    const { name: _name, ...rest } = c;
    void _name;
    return { id: ids[i], ...rest };
  });
  const defaultScorer = outcome.defaultScorer ?? cases.find((c) => c.scorer !== undefined)?.scorer ?? { type: 'exact' };
  const description = `Imported from ${path.basename(outcome.source)} by ${outcome.command}${outcome.title !== undefined ? `: ${outcome.title}` : ''}`.slice(0, 4000);
  const doc = suiteDocument({ key, description, defaultScorer, cases });
  const file = path.resolve(io.cwd, out);
  const text = suiteYaml(doc, `# Written by \`${outcome.command}\` from ${path.basename(outcome.source)} (docs/suites.md, "Importing").`);
  // The file is written only once the suite parser accepts it: an import never leaves a broken suite behind.
  const parsed = parseSuiteYaml(text, out);
  if (!parsed.ok) throw new SuiteRefused(parsed.errors);
  try {
    fs.writeFileSync(file, text);
  } catch {
    throw new CliError(EXIT.USAGE, `${outcome.command}: cannot write ${out}`);
  }
  const mapped = outcome.mapped !== undefined && outcome.mapped.size > 0 ? `; mapped ${[...outcome.mapped].map(([t, n]) => `${t} ${n}`).join(', ')}` : '';
  io.out(`${outcome.command}: wrote ${out} (suite ${key}): ${cases.length} cases from ${outcome.items.length} ${outcome.noun}s${mapped}`);
  if (outcome.leftOut.length > 0) {
    io.out(`left out (--skip-unsupported), ${outcome.leftOut.length}:`);
    for (const line of report) io.out(line);
  }
  return EXIT.PASS;
}

export function readSource(file: string, command: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(EXIT.USAGE, `${command}: cannot read ${file}`);
  }
}
