import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSuiteKey } from '@evals/limits';
import type { SuiteDefinition } from '@evals/domain';
import type { CompiledScorer } from '@evals/scorers';
import type { Io } from './command';
import { ApiError, CliError, EXIT, UsageError } from './exit-codes';
import { isObject, url, type ApiClient } from './http';

/**
 * The suite parser and the scorers (libs/domain, yaml) are loaded only when a suite file or a fetched suite
 * is read: `evals run --suite <key>` needs neither (issue 15, the CLI's start-up).
 */
function localEvaluation(): typeof import('./local-evaluation') {
  return require('./local-evaluation') as typeof import('./local-evaluation');
}

/**
 * `--suite` takes a suite key or a suite file, for every command (docs/cli.md, "--suite: a key or a file"):
 * an existing file is the file (pushed first where the command needs a stored version - idempotent, V2 -
 * and the version it became is said and used); otherwise a key. A key the service does not know gets the
 * close matches and the known suites.
 */
export type SuiteArg = { readonly kind: 'key'; readonly key: string; readonly given: string } | { readonly kind: 'file'; readonly file: string; readonly given: string };

export function classifySuite(value: string, cwd: string): SuiteArg {
  const file = path.resolve(cwd, value);
  if (isFile(file)) return { kind: 'file', file, given: value };
  if (isSuiteKey(value)) return { kind: 'key', key: value, given: value };
  if (/[\\/]|\.(ya?ml|json)$/i.test(value)) throw new CliError(EXIT.USAGE, `--suite ${value}: no such suite file`);
  throw new UsageError(`--suite ${value} is neither a suite file nor a suite key (a key is lowercase letters, digits and . _ -)`);
}

/**
 * For commands that only filter or address by key (`scorecard`, `baseline list`, `baseline pin`): a file
 * stands for its key, read (and validated) locally; nothing is pushed.
 */
export function suiteKeyOf(value: string | undefined, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  const arg = classifySuite(value, cwd);
  return arg.kind === 'key' ? arg.key : localEvaluation().loadSuite(arg.file).suite.key;
}

/** For `Command.service`: whether `--suite` in raw arguments names a key (a service is needed) rather than a file. */
export function suiteFlagIsKey(args: readonly string[], cwd: string): boolean {
  const values = flagValues(args, '--suite');
  return values.length === 0 || values.some((v) => !isFile(path.resolve(cwd, v)));
}

function flagValues(args: readonly string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') break;
    if (args[i] === flag && i + 1 < args.length) out.push(args[++i]);
    else if (args[i].startsWith(`${flag}=`)) out.push(args[i].slice(flag.length + 1));
  }
  return out;
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export interface PushAnswer {
  readonly created: boolean;
  readonly key: string | null;
  readonly version: number | null;
  readonly sameContentAs: number | null;
  readonly body: unknown;
}

/**
 * `POST /v1/suites` of a suite file as YAML, with the local validation's answer (file, line, case, field)
 * for a file with problems. A large file is POSTed first and validated locally only if the service refuses
 * it: a valid one is then parsed once, by the service - or not at all when the service
 * knows its bytes (V2, issue 15) - and an invalid one still gets the local message, while a failure of a
 * valid one is reported as the POST's. A small file (LOCAL_FIRST_MAX_BYTES) is validated first, as it is
 * parsed in milliseconds: a broken hand-written suite then never reaches the network, nor starts the
 * embedded service (cli.ts, checkLocally).
 */
export async function pushSuiteFile(client: ApiClient, file: string): Promise<PushAnswer> {
  let yaml: string;
  try {
    yaml = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(EXIT.USAGE, `cannot read suite file ${file}`);
  }
  const localFirst = yaml.length <= LOCAL_FIRST_MAX_BYTES;
  if (localFirst) localEvaluation().loadSuite(file);
  const answer = await client.post(url(client.endpoints.ingestion, '/v1/suites'), { text: yaml, contentType: 'application/yaml' }).catch(async (error: unknown) => {
    // Refused: the file's own problems, where it has any, say more than the service's summary of them (read
    // slice by slice: a large file is not held as a suite, issue 31). Not reached: that is the answer (the
    // embedded default's dry run before its start ends here too, so a large file is never parsed by the
    // client just to find nothing wrong with it).
    if (!localFirst && error instanceof ApiError) await localEvaluation().checkSuiteText(yaml, file);
    throw error;
  });
  const body: Partial<typeof answer.body> = isObject(answer.body) ? answer.body : {};
  const suite: Partial<NonNullable<typeof body.suite>> = isObject(body.suite) ? body.suite : {};
  return {
    created: body.created === true,
    key: typeof suite.suite_key === 'string' ? suite.suite_key : null,
    version: typeof suite.version === 'number' ? suite.version : null,
    sameContentAs: typeof body.same_content_as === 'number' ? body.same_content_as : null,
    body: answer.body,
  };
}

/**
 * The suite a service command runs on: a key as given (with `--suite-version` if any), or a file pushed
 * now, whose version is then pinned so the run uses exactly the content of the file.
 */
export async function useSuite(arg: SuiteArg, version: number | undefined, client: ApiClient, io: Io, command: string): Promise<{ key: string; version: number | undefined }> {
  if (arg.kind === 'key') return { key: arg.key, version };
  if (version !== undefined) useSuiteVersionWithFile();
  const pushed = await pushSuiteFile(client, arg.file);
  if (pushed.key === null || pushed.version === null) throw new CliError(EXIT.UNREACHABLE, 'POST /v1/suites answered without the suite key and version');
  const how = pushed.created ? `pushed as a new version${pushed.sameContentAs !== null ? ` (same content as v${pushed.sameContentAs})` : ''}` : 'already stored (identical content)';
  io.err(`evals ${command}: suite file ${arg.given} is ${pushed.key} v${pushed.version}, ${how}; using ${pushed.key} v${pushed.version}`);
  return { key: pushed.key, version: pushed.version };
}

/** Characters (about bytes) up to which a suite file is validated before it is pushed (pushSuiteFile). */
const LOCAL_FIRST_MAX_BYTES = 64 * 1024;

export function useSuiteVersionWithFile(): never {
  throw new UsageError('--suite-version goes with a suite key: a suite file is pushed and the version it became is used');
}

/**
 * `evals score --suite KEY`: the stored suite (latest, or `version`) as the local scorer needs it, checked
 * by the same validation as a file.
 */
export async function fetchSuite(client: ApiClient, key: string, version: number | undefined): Promise<{ suite: SuiteDefinition; scorers: readonly CompiledScorer[]; version: number }> {
  const route = version === undefined ? `/v1/suites/${encodeURIComponent(key)}` : `/v1/suites/${encodeURIComponent(key)}/versions/${version}`;
  const answer = await client.get(url(client.endpoints.ingestion, route));
  const stored = isObject(answer.body) && isObject(answer.body.suite) ? answer.body.suite : {};
  const cases = Array.isArray(stored.cases) ? stored.cases.filter(isObject) : [];
  const raw = {
    key: stored.suite_key,
    ...(typeof stored.description === 'string' ? { description: stored.description } : {}),
    default_scorer: stored.default_scorer,
    pass_threshold: stored.pass_threshold,
    regression_threshold: stored.regression_threshold,
    golden_fixtures: stored.golden_fixtures,
    cases: cases.map((c) => ({
      id: c.case_id,
      input: c.input,
      ...(c.expected !== undefined ? { expected: c.expected } : {}),
      ...(isObject(c.scorer) ? { scorer: c.scorer } : {}),
      ...(Array.isArray(c.tags) && c.tags.length > 0 ? { tags: c.tags } : {}),
    })),
  };
  const parsed = localEvaluation().checkSuite(raw, `${key} (from the service)`);
  return { ...parsed, version: typeof stored.version === 'number' ? stored.version : 0 };
}

/**
 * Turns the service's SUITE_NOT_FOUND for keys we sent into "no suite X; did you mean ...; known suites".
 * Any other error is returned as it is.
 */
export async function explainUnknownSuite(error: unknown, keys: readonly string[], client: ApiClient, io: Io): Promise<unknown> {
  if (!(error instanceof ApiError) || error.code !== 'SUITE_NOT_FOUND' || keys.length === 0) return error;
  const missing = keys.length === 1 ? [...keys] : await unknownOf(keys, client);
  if (missing.length === 0) return error;
  const known = await knownSuites(client, io);
  const lines = [error.message];
  for (const key of missing) {
    const close = closeMatches(key, known.map((k) => k.key));
    lines.push(`no suite ${key} on ${client.endpoints.ingestion}${close.length > 0 ? `; did you mean ${close.join(' or ')}?` : ''}`);
  }
  lines.push(
    known.length > 0
      ? `known suites: ${known.map((k) => (k.where === 'service' ? k.key : `${k.key} (file ${k.where}, not pushed)`)).join(', ')}`
      : 'no suites known: push one with `evals suite push FILE`, or give --suite FILE',
  );
  if (known.some((k) => k.where !== 'service')) lines.push('a suite file can be given as --suite FILE: it is pushed first');
  return explained(error, lines.join('\n  '));
}

/** The same refusal (code, status, body for --json), told with the suggestions. */
function explained(error: ApiError, message: string): ApiError {
  const copy = new ApiError(error.status, error.code, error.serverMessage, error.field, error.url, error.body);
  copy.message = message;
  return copy;
}

async function unknownOf(keys: readonly string[], client: ApiClient): Promise<string[]> {
  const missing: string[] = [];
  for (const key of new Set(keys)) {
    try {
      await client.get(url(client.endpoints.ingestion, `/v1/suites/${encodeURIComponent(key)}`), { timeoutMs: 5000 });
    } catch (e) {
      if (e instanceof ApiError && e.code === 'SUITE_NOT_FOUND') missing.push(key);
    }
  }
  return missing;
}

/**
 * The suites we can name: the service's (`GET /v1/suites` - every suite pushed, run or not) and the suite
 * files in the working directory, `examples/` and `suites/` that the service does not have.
 */
export async function knownSuites(client: ApiClient, io: Pick<Io, 'cwd'>): Promise<Array<{ key: string; where: string }>> {
  const found = new Map<string, string>();
  try {
    // A few pages at most: this is a suggestion list, not an inventory.
    for (let offset = 0, page = 0; page < 4; page++) {
      const answer = await client.get(url(client.endpoints.ingestion, `/v1/suites?offset=${offset}&limit=500`), { timeoutMs: 5000 });
      const items = isObject(answer.body) && Array.isArray(answer.body.items) ? answer.body.items : [];
      for (const s of items) if (isObject(s) && typeof s.suite_key === 'string') found.set(s.suite_key, 'service');
      offset += items.length;
      const total = isObject(answer.body) && typeof answer.body.total === 'number' ? answer.body.total : 0;
      if (items.length === 0 || offset >= total) break;
    }
  } catch {
    // The list is a courtesy: the refusal itself is already known.
  }
  for (const dir of ['.', 'examples', 'suites']) {
    let names: string[];
    try {
      names = fs.readdirSync(path.resolve(io.cwd, dir));
    } catch {
      continue;
    }
    for (const name of names.filter((n) => /\.suite\.ya?ml$/.test(n)).sort()) {
      const rel = dir === '.' ? name : `${dir}/${name}`;
      const key = keyOfFile(path.resolve(io.cwd, rel));
      if (key && !found.has(key)) found.set(key, rel);
    }
  }
  return [...found.entries()].map(([key, where]) => ({ key, where })).sort((a, b) => a.key.localeCompare(b.key));
}

/** The top-level `key:` of a suite file, read without parsing the whole file. */
function keyOfFile(file: string): string | null {
  try {
    const head = fs.readFileSync(file, 'utf8').slice(0, 64 * 1024);
    const m = /^key:[ \t]*["']?([a-z0-9][a-z0-9._-]{0,127})["']?[ \t]*(#.*)?$/m.exec(head);
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

/** Keys within a small edit distance (a typo, a swapped pair) or sharing a stem with `key`, closest first. */
export function closeMatches(key: string, candidates: readonly string[], max = 3): string[] {
  const limit = Math.max(2, Math.floor(key.length / 3));
  return candidates
    .filter((c) => c !== key)
    .map((c) => ({ c, d: c.includes(key) || key.includes(c) ? Math.min(editDistance(key, c), 1) : editDistance(key, c) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, max)
    .map((x) => x.c);
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
