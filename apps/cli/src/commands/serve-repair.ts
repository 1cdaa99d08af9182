import * as path from 'node:path';
import type { Io } from '../command';
import { CliError, EXIT } from '../exit-codes';

/**
 * `evals serve --repair`, before the server starts: every journal of the data directory's bus that an open
 * would refuse (a damaged record, a truncation, a missing journal with a recorded state) is rewritten with its
 * intact records, and what was found, kept and dropped is printed on stderr (docs/embedded.md). Intact
 * journals are left as they are. The bus code is loaded only here.
 */
export async function repairBusJournals(dataDir: string, io: Io): Promise<void> {
  const { describeRepair, repairJournals } = require('@evals/bus') as typeof import('@evals/bus');
  const dir = path.join(dataDir, 'bus');
  let repairs;
  try {
    repairs = await repairJournals(dir);
  } catch (error) {
    // The directory's lock held by a live process: a running `evals serve`.
    throw new CliError(EXIT.USAGE, `evals serve --repair: ${(error as Error).message}`);
  }
  const damaged = repairs.filter((r) => r.problems.length > 0);
  io.err(
    [
      `evals serve --repair: ${repairs.length} bus journal(s) in ${dir}, ${damaged.length} repaired`,
      ...repairs.flatMap((r) => describeRepair(r).map((line) => `  ${line}`)),
    ].join('\n'),
  );
}
