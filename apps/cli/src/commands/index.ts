import type { Command } from '../command';
import { JUDGE_COMMANDS } from '../judge';
import { baselineListCommand } from './baseline-list.command';
import { baselinePinCommand } from './baseline-pin.command';
import { demoCommand } from './demo.command';
import { gateStatusCommand } from './gate-status.command';
import { gateCommand } from './gate.command';
import { overrideCommand } from './override.command';
import { runCommand } from './run.command';
import { scoreCommand } from './score.command';
import { scorecardCommand } from './scorecard.command';
import { serveCommand } from './serve.command';
import { suitePushCommand } from './suite-push.command';
import { suiteValidateCommand } from './suite-validate.command';

export type { Command, Io } from '../command';

/**
 * The registry of CLI commands, in the order `evals --help` lists them. One file per command
 * (`<name>.command.ts`), each exporting one `Command`; a command name is one or two words (`gate`,
 * `gate status`). To add a command, import it here. The judge commands (`label`, `calibrate`, `compare`)
 * live in `../judge` and come in as `JUDGE_COMMANDS`.
 */
export const COMMANDS: readonly Command[] = [
  suiteValidateCommand,
  suitePushCommand,
  scoreCommand,
  runCommand,
  gateCommand,
  gateStatusCommand,
  overrideCommand,
  baselinePinCommand,
  baselineListCommand,
  scorecardCommand,
  ...JUDGE_COMMANDS,
  demoCommand,
  serveCommand,
];

/** The command named by the first one or two arguments: `gate status X` is `gate status`, `gate --suite` is `gate`. */
export function findCommand(args: readonly string[], commands: readonly Command[] = COMMANDS): { command: Command; rest: string[] } | undefined {
  const two = args.length >= 2 ? `${args[0]} ${args[1]}` : undefined;
  const byTwo = two !== undefined ? commands.find((c) => c.name === two) : undefined;
  if (byTwo) return { command: byTwo, rest: args.slice(2) };
  const byOne = commands.find((c) => c.name === args[0]);
  if (byOne) return { command: byOne, rest: args.slice(1) };
  return undefined;
}

/** Names are unique: checked by the unit tests, so a second registration cannot shadow a command. */
export function commandNames(commands: readonly Command[] = COMMANDS): string[] {
  return commands.map((c) => c.name);
}
