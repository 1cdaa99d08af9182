import * as path from 'node:path';
import type { Command, Io } from './command';
import { COMMAND_INDEX, findCommand } from './commands';
import { ApiError, CliError, EXIT, UsageError } from './exit-codes';
import { checkProjectId } from './project';

export type { Io } from './command';

const EXIT_LINE = 'Exit codes: 0 pass, 1 evaluation or gate failed, 2 usage, configuration or refused input, 3 service unreachable.';

const ENVIRONMENT = [
  'Environment:',
  '  EVALS_SERVER             ingestion API (default: the embedded service, see EVALS_DATA_DIR)',
  '  EVALS_DATA_DIR           data of the embedded service (default ./.evals; docs/embedded.md)',
  '  EVALS_READ_SERVER        read model (default: EVALS_SERVER with port + 2)',
  '  EVALS_REGRESSION_SERVER  regression app (default: EVALS_SERVER with port + 3)',
  '  EVALS_API_KEY            sent as Authorization: Bearer <key>',
  '  EVALS_PROJECT            the project to act in, sent as X-Evals-Project (--project beats it)',
  '  NO_COLOR                 no colours; EVALS_NO_PROGRESS: no progress line',
];

/** The help of one command (loaded for it), or with no or an unknown name the list of commands. */
export async function help(name?: string): Promise<string> {
  const entry = name ? COMMAND_INDEX.find((c) => c.name === name) : undefined;
  return entry ? commandHelp(await entry.load()) : overview();
}

function commandHelp(command: Command): string {
  const lines = [command.summary, '', `Usage: ${command.usage}`];
  if (command.options && command.options.length > 0) lines.push('', 'Options:', ...command.options.map((o) => `  ${o}`));
  if (command.environment && command.environment.length > 0) lines.push('', 'Environment:', ...command.environment.map((e) => `  ${e}`));
  lines.push('', 'Example:', ...command.example.split('\n').map((e) => `  ${e}`), '', command.exitCodes ?? EXIT_LINE);
  return lines.join('\n');
}

/** Names and summaries only: `evals --help` loads no command (issue 15). */
function overview(): string {
  const width = Math.max(...COMMAND_INDEX.map((c) => c.name.length));
  return [
    'evals: score agent outputs against versioned golden suites, with honest statistics.',
    '',
    'Usage: evals [--project ID] COMMAND [options]   (evals COMMAND --help for one command)',
    '',
    ...COMMAND_INDEX.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    ...ENVIRONMENT,
    '',
    EXIT_LINE,
    'Docs: docs/cli.md',
  ].join('\n');
}

export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  let global;
  try {
    global = globalOptions(argv, io);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    io.err(`evals: ${error.message}`);
    return error.exitCode;
  }
  const args = global.args;
  io = global.io;
  if (args.length === 0 || args[0] === '--help' || args[0] === '-h' || args[0] === 'help') {
    const topic = args[0] === 'help' && args.length > 1 ? args.slice(1).join(' ') : undefined;
    io.out(await help(topic));
    return args.length === 0 ? EXIT.USAGE : EXIT.PASS;
  }
  const found = findCommand(args, COMMAND_INDEX);
  if (!found) {
    io.err(`evals: unknown command ${args.slice(0, 2).join(' ')}\n\n${overview()}`);
    return EXIT.USAGE;
  }
  const { rest } = found;
  const command = await found.command.load();
  const dashDash = rest.indexOf('--');
  const flags = dashDash === -1 ? rest : rest.slice(0, dashDash);
  if (flags.includes('--help') || flags.includes('-h')) {
    io.out(commandHelp(command));
    return EXIT.PASS;
  }
  try {
    return await withService(command, flags, io, (commandIo) => command.run(rest, commandIo));
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`evals ${command.name}: ${error.message}`);
      if (error instanceof ApiError && flags.includes('--json') && error.body !== null) io.out(JSON.stringify(error.body, null, 2));
      // Only for a command used wrongly (UsageError): a refused suite or outputs file was given correctly.
      if (error instanceof UsageError) {
        io.err(`usage: ${command.usage}\n(evals ${command.name} --help for options and an example)`);
      }
      return error.exitCode;
    }
    io.err(`evals ${command.name}: unexpected error: ${error instanceof Error ? error.name : 'error'}`);
    return EXIT.USAGE;
  }
}

/**
 * Issue 30: `--project ID` before the command (`evals --project team-a gate ...`) is the project of whatever
 * the command sends; it stands for EVALS_PROJECT (so it beats the variable) and a `--project` among the
 * command's own options beats it in turn. Checked here, once: the commands read it as the variable.
 */
function globalOptions(argv: readonly string[], io: Io): { args: string[]; io: Io } {
  const args = [...argv];
  let project: string | undefined;
  while (args[0] === '--project' || args[0]?.startsWith('--project=')) {
    const flag = args.shift()!;
    project = flag === '--project' ? args.shift() : flag.slice('--project='.length);
    if (project === undefined) throw new UsageError('--project needs a project id');
  }
  if (project === undefined) return { args, io };
  return { args, io: { ...io, env: { ...io.env, EVALS_PROJECT: checkProjectId(project, '--project') } } };
}

/**
 * A service command given no server (no --server, no EVALS_SERVER) runs against the embedded all-in-one on
 * the data directory: the `evals serve` that has it open, or one started in this process for the command
 * and closed after it (docs/embedded.md). Every endpoint is that one URL.
 */
async function withService(command: Command, flags: readonly string[], io: Io, run: (io: Io) => Promise<number>): Promise<number> {
  const named = flags.some((f) => f === '--server' || f.startsWith('--server=')) || (io.env.EVALS_SERVER ?? '').trim() !== '';
  const needsService = typeof command.service === 'function' ? command.service(flags, io) : command.service === true;
  if (!needsService || named || !io.embedded) return run(io);
  await checkLocally(io, run);
  const dataDir = dataDirOf(io);
  let service;
  try {
    service = await io.embedded(dataDir);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const reason = error instanceof Error ? error.message : 'error';
    throw new CliError(
      code === 'CONFIG_INVALID' ? EXIT.USAGE : EXIT.UNREACHABLE,
      `the embedded service on ${dataDir} did not start (${typeof code === 'string' ? `${code}: ` : ''}${reason}); give --server URL for a running service`,
    );
  }
  if (service.mode === 'started') io.err(`evals: no --server: embedded service on ${path.relative(io.cwd, dataDir) || '.'} (started for this command; \`evals serve\` keeps one running)`);
  // A Ctrl-C while the command's own server runs closes it (PGlite, the bus journal) before exiting.
  const interrupted = () => void service.close().finally(() => process.exit(130));
  if (service.mode === 'started') {
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
  }
  try {
    return await run({ ...io, env: { ...io.env, EVALS_SERVER: service.url, EVALS_READ_SERVER: service.url, EVALS_REGRESSION_SERVER: service.url } });
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await service.close();
  }
}

/**
 * Runs the command once with no service, up to its first request, so that whatever it can refuse by itself -
 * a usage error, a bad suite or outputs file, a size limit - is refused before the embedded service starts
 * (seconds of PGlite and migrations on a fresh data directory). Silent: no output, no progress; the first
 * request ends the dry run and the real one follows. Nothing a command does before its first request is
 * more than reading its files.
 */
async function checkLocally(io: Io, run: (io: Io) => Promise<number>): Promise<void> {
  let reached = false;
  const dry: Io = {
    ...io,
    out: () => undefined,
    err: () => undefined,
    writeErr: () => undefined,
    isTty: false,
    errIsTty: false,
    env: { ...io.env, EVALS_SERVER: 'http://127.0.0.1:9', EVALS_READ_SERVER: 'http://127.0.0.1:9', EVALS_REGRESSION_SERVER: 'http://127.0.0.1:9' },
    fetch: (async () => {
      reached = true;
      throw new Error('dry run: no request');
    }) as typeof fetch,
  };
  try {
    await run(dry);
  } catch (error) {
    if (!reached) throw error;
  }
}

export function dataDirOf(io: Pick<Io, 'env' | 'cwd'>): string {
  const configured = io.env.EVALS_DATA_DIR?.trim();
  return path.resolve(io.cwd, configured ? configured : '.evals');
}
