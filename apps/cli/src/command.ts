import { parseArgs } from 'node:util';
import { UsageError } from './exit-codes';

/**
 * What a command sees of the world. `main.ts` wires the real process; tests pass their own (and may swap
 * `fetch` and the clock), so every command can be run in-process without a server.
 */
export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** stdout is a terminal: colours (unless NO_COLOR) and, with `errIsTty`, progress. */
  readonly isTty: boolean;
  readonly cwd: string;
  /** stderr is a terminal. Progress is drawn only when both are (and never with --json). */
  readonly errIsTty?: boolean;
  /** Raw write to stderr without a line break (progress line). */
  readonly writeErr?: (text: string) => void;
  /** Defaults to requests over node:http (http-transport.ts); tests pass a fake. */
  readonly fetch?: typeof fetch;
  /** Milliseconds; defaults to Date.now. */
  readonly now?: () => number;
  /**
   * Opens the embedded service on a data directory (main.ts wires the real one); absent in unit tests,
   * where a command without --server talks to the default URL.
   */
  readonly embedded?: (dataDir: string) => Promise<EmbeddedService>;
}

export interface EmbeddedService {
  readonly url: string;
  /** `started`: in this process, closed with the command; `shared`: an `evals serve` that has the directory. */
  readonly mode: 'started' | 'shared';
  close(): Promise<void>;
}

/**
 * One CLI command. `name` is what the user types (`suite push`, `gate status`); `run` returns the exit code
 * (exit-codes.ts) or throws a CliError carrying one.
 */
export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  /** Option lines shown by `--help`, e.g. `--suite KEY   suite key (required)`. */
  readonly options?: readonly string[];
  readonly example: string;
  /** The exit-code line of `--help` when the command's codes are not the evaluation ones (`evals serve`). */
  readonly exitCodes?: string;
  /** Environment variables `--help` lists for this command. */
  readonly environment?: readonly string[];
  /**
   * Talks to the service. Without --server / EVALS_SERVER such a command uses the embedded all-in-one on
   * the data directory (docs/embedded.md): the `evals serve` that has it open, or one started in-process.
   */
  readonly service?: boolean | ((args: readonly string[], io: Pick<Io, 'cwd'>) => boolean);
  run(args: string[], io: Io): Promise<number>;
}

type OptionSpec = { readonly type: 'string' | 'boolean'; readonly short?: string; readonly multiple?: boolean };
type OptionSpecs = Readonly<Record<string, OptionSpec>>;
/** A `multiple: true` option is every value given, in order (`--suite A --suite B`); any other, the last. */
type Values<T extends OptionSpecs> = {
  -readonly [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : T[K]['multiple'] extends true ? string[] : string;
};

/** Strict parsing: an unknown option, a missing value or a stray positional is a usage error (exit 2). */
export function parseOptions<T extends OptionSpecs>(args: readonly string[], options: T, positionals: { min?: number; max?: number; names?: string } = {}): { values: Values<T>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: options as never, allowPositionals: true, strict: true });
  } catch (error) {
    // Not `instanceof Error`: node:util's errors may come from another realm (Jest's VM context).
    const message = typeof (error as { message?: unknown })?.message === 'string' ? (error as { message: string }).message : 'invalid arguments';
    throw new UsageError(message.replace(/\. To specify a positional argument[^]*$/, '').replace(/\. Did you forget to specify the option argument[^]*$/, ''));
  }
  const min = positionals.min ?? 0;
  const max = positionals.max ?? 0;
  const given = parsed.positionals;
  if (given.length < min || given.length > max) {
    const what = positionals.names ?? 'arguments';
    throw new UsageError(max === 0 ? `unexpected argument ${given[0]}` : `expected ${min === max ? min : `${min} to ${max}`} ${what}, got ${given.length}`);
  }
  return { values: parsed.values as Values<T>, positionals: given };
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value;
}

/** A whole number in [min, max]; `--sample-size 50`. */
export function integerOption(value: string | undefined, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}`);
  }
  return n;
}

export function positiveSeconds(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 86_400) throw new UsageError(`${flag} must be a number of seconds in (0, 86400]`);
  return n;
}

export function oneOf<T extends string>(value: string | undefined, flag: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** Options every command that talks to the service accepts (docs/cli.md, "Servers"). */
export const SERVER_OPTIONS = {
  server: { type: 'string' },
  'read-server': { type: 'string' },
  'regression-server': { type: 'string' },
  'api-key': { type: 'string' },
  project: { type: 'string' },
  timeout: { type: 'string' },
} as const;

export const SERVER_OPTION_HELP = [
  '--server URL             ingestion API (EVALS_SERVER; default: the embedded service on .evals/, EVALS_DATA_DIR)',
  '--read-server URL        read model (EVALS_READ_SERVER; default: --server with port + 2, i.e. 3003)',
  '--regression-server URL  regression app (EVALS_REGRESSION_SERVER; default: --server with port + 3, i.e. 3004)',
  '--api-key KEY            sent as Authorization: Bearer KEY (EVALS_API_KEY; prefer the variable)',
  '--project ID             the project to act in, sent as X-Evals-Project (EVALS_PROJECT; default: the key\'s own, else default)',
  '--timeout SECONDS        give up waiting for an answer (exit 3)',
] as const;

/** Options of the commands that produce a verdict. */
export const REPORT_OPTIONS = {
  json: { type: 'boolean' },
  junit: { type: 'string' },
  summary: { type: 'string' },
} as const;

export const REPORT_OPTION_HELP = [
  '--json                   print the raw API JSON on stdout (no table, no progress)',
  '--junit FILE             write JUnit XML: one testcase per case',
  '--summary FILE           write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)',
] as const;
