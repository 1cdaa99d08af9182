import * as fs from 'node:fs';
import { compareRuns, parseSuiteYaml, streamSuiteYaml, validateSuite, type Comparison, type SuiteDefinition, type SuiteError } from '@evals/domain';
import type { CompiledScorer, ScoreResult } from '@evals/scorers';
import { wilson } from '@evals/stats';
import { CliError, EXIT } from './exit-codes';
import { readOutputsFile } from './outputs-file';

/**
 * Scores a suite file against an outputs file in this process, with the pure core only: no server, no
 * database, nothing written. The durable service does the same through its pipeline; this is the quick
 * local loop and the demo.
 */
export interface LocalCaseResult extends ScoreResult {
  readonly case_id: string;
  readonly scorer: string;
}

export interface LocalRun {
  readonly label: string;
  readonly cases: readonly LocalCaseResult[];
  readonly n: number;
  readonly passed: number;
  readonly score: number;
  readonly interval: { lower: number; upper: number };
  readonly run_passed: boolean;
}

export function loadSuite(file: string): { suite: SuiteDefinition; scorers: readonly CompiledScorer[] } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(EXIT.USAGE, `cannot read suite file ${file}`);
  }
  if (lastLoaded?.file === file && lastLoaded.text === text) return lastLoaded.loaded;
  const parsed = parseSuiteYaml(text, file);
  if (!parsed.ok) throw new SuiteRefused(parsed.errors);
  const loaded = { suite: parsed.suite, scorers: parsed.scorers };
  lastLoaded = text.length <= MEMO_MAX_CHARS ? { file, text, loaded } : undefined;
  return loaded;
}

/**
 * loadSuite's refusal of a suite file's text, read slice by slice (issue 31): the same problems in the same
 * order, without holding the suite - for a large file the service refused (suite-arg.ts, pushSuiteFile),
 * whose cases are not needed here.
 */
export async function checkSuiteText(text: string, file: string): Promise<void> {
  const checked = await streamSuiteYaml(text, file);
  if (!checked.ok) throw new SuiteRefused(checked.errors);
}

/**
 * The last suite file read, by its exact text: a command checked locally before the embedded service
 * starts (cli.ts) reads its suite file twice in one process, and parsing a 10 000-case file is a tenth of
 * a second or more each time. Only files up to MEMO_MAX_CHARS: a larger one is not kept alive for the
 * rest of the command.
 */
let lastLoaded: { file: string; text: string; loaded: { suite: SuiteDefinition; scorers: readonly CompiledScorer[] } } | undefined;
const MEMO_MAX_CHARS = 4 * 1024 * 1024;

export class SuiteRefused extends CliError {
  constructor(readonly errors: readonly SuiteError[]) {
    super(EXIT.USAGE, errors.map(describeSuiteError).join('\n'));
  }
}

/** A suite given as data (e.g. fetched from the service), checked by the same validation as a file. */
export function checkSuite(raw: unknown, label: string): { suite: SuiteDefinition; scorers: readonly CompiledScorer[] } {
  const parsed = validateSuite(raw, label);
  if (!parsed.ok) throw new SuiteRefused(parsed.errors);
  return { suite: parsed.suite, scorers: parsed.scorers };
}

export function describeSuiteError(e: SuiteError): string {
  const where = [e.file, e.line !== undefined ? `${e.line}:${e.column ?? 1}` : undefined].filter(Boolean).join(':');
  const what = [e.case_id ? `case ${e.case_id}` : undefined, e.field || undefined].filter(Boolean).join(', ');
  return `${where}: ${what ? `${what}: ` : ''}${e.message} [${e.code}]`;
}

/**
 * The outputs file as a map case id -> output: JSON Lines, a JSON array or pretty-printed objects, with or
 * without a BOM (outputs-file.ts). A bad object is refused with its line number, never its content.
 */
export function loadOutputs(file: string): Map<string, string> {
  return new Map(readOutputsFile(file).map((r) => [r.case_id, r.output]));
}

export function scoreLocally(
  label: string,
  suite: SuiteDefinition,
  scorers: readonly CompiledScorer[],
  outputs: ReadonlyMap<string, string>,
  onProgress?: (done: number, total: number) => void,
): LocalRun {
  const known = new Set(suite.cases.map((c) => c.id));
  for (const id of outputs.keys()) {
    if (!known.has(id)) throw new CliError(EXIT.USAGE, `${label}: output for unknown case ${id} (R1)`);
  }
  const cases = suite.cases.map((c, i): LocalCaseResult => {
    const scorer = scorers[i];
    onProgress?.(i, suite.cases.length);
    const output = outputs.get(c.id);
    if (output === undefined) return { case_id: c.id, scorer: scorer.name, score: 0, passed: false, label: 'missing_output' };
    if (scorer.kind === 'judge') return { case_id: c.id, scorer: scorer.name, score: 0, passed: false, label: 'judge_not_configured' };
    return { case_id: c.id, scorer: scorer.name, ...scorer.score(output) };
  });
  onProgress?.(suite.cases.length, suite.cases.length);
  const n = cases.length;
  const passed = cases.filter((c) => c.passed).length;
  const w = wilson(passed, n);
  const score = n === 0 ? 0 : cases.reduce((s, c) => s + c.score, 0) / n;
  return { label, cases, n, passed, score, interval: { lower: w.lower, upper: w.upper }, run_passed: n > 0 && passed / n >= suite.pass_threshold };
}

export function compareLocal(run: LocalRun, baseline: LocalRun, threshold: number): Comparison {
  return compareRuns({ run_id: run.label, n: run.n, passed: run.passed, score: run.score }, { run_id: baseline.label, n: baseline.n, passed: baseline.passed, score: baseline.score }, threshold);
}

// `loadOutputList` lives with the outputs file's other readers; `evals run` loads it without the pure core.
export { loadOutputList } from './outputs-file';
