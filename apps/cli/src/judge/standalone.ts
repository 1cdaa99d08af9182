/**
 * Runs one judge command (`label`, `calibrate`, `compare`) as its own process, exactly as `evals` does once
 * they are registered: used by the tests, and handy on a checkout -
 * `node -r @swc-node/register apps/cli/src/judge/standalone.ts label --set items.jsonl`.
 */
import { CliError, EXIT } from '../exit-codes';
import { JUDGE_COMMANDS } from './index';

async function main(argv: string[]): Promise<number> {
  const command = JUDGE_COMMANDS.find((c) => c.name === argv[0]);
  const io = {
    out: (t: string) => void process.stdout.write(`${t}\n`),
    err: (t: string) => void process.stderr.write(`${t}\n`),
    env: process.env,
    isTty: Boolean(process.stdout.isTTY),
    errIsTty: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
  };
  if (!command) {
    io.err(`usage: standalone.ts ${JUDGE_COMMANDS.map((c) => c.name).join('|')} [options]`);
    return EXIT.USAGE;
  }
  try {
    return await command.run(argv.slice(1), io);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`evals ${command.name}: ${error.message}`);
      return error.exitCode;
    }
    io.err(`evals ${command.name}: unexpected error: ${error instanceof Error ? error.name : 'error'}`);
    return EXIT.USAGE;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
