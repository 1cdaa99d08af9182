/**
 * Child processes of in-process.bus.int-spec.ts.
 *
 *   in-process.bus.probe.ts DIR STREAM_PREFIX SUBJECT_PREFIX
 *     is killed (SIGKILL) mid-work: it publishes work and inbound messages as fast as it can and acknowledges
 *     the inbound ones, printing one JSON line per confirmed fact.
 *   in-process.bus.probe.ts --lock-race DIR
 *     takes the bus lock of DIR once it reads a line on stdin, pausing 300 ms between reading the lock file
 *     and acting on what it read (so two of them started together both judge a stale lock before either
 *     acts), prints {locked: pid} or {refused: message}, then holds on for a while.
 *
 * Usage: node -r @swc-node/register in-process.bus.probe.ts ...
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { InProcessBus } from './in-process.bus';
import { acquireLock } from './in-process.journal';
import { CONSUMERS, subjectOf, type BusNames } from './topology';

const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function work(dir: string, streamPrefix: string, subjectPrefix: string): Promise<void> {
  const names: BusNames = { streamPrefix, subjectPrefix };
  const bus = await InProcessBus.open(names, { dir });
  await bus.ensureTopology();
  await bus.consume(CONSUMERS.ingestion, {
    maxBatch: 10,
    handler: async (batch) => {
      for (const m of batch) {
        await m.ackConfirmed();
        say({ confirmed: m.messageId });
      }
    },
  });
  say({ ready: process.pid });
  // Bounded, should the test that kills it die first.
  const deadline = Date.now() + 60_000;
  for (let round = 0; Date.now() < deadline; round++) {
    const ids = Array.from({ length: 20 }, (_, i) => `${round}-${i}`);
    await Promise.all(ids.map((id) => bus.publish(subjectOf(names, 'evals.work.score'), `work ${id}`, `w-${id}`)));
    say({ work: ids.map((id) => `w-${id}`) });
    await Promise.all(ids.map((id) => bus.publish(subjectOf(names, 'evals.output.submitted'), `output ${id}`, `o-${id}`)));
    say({ inbound: ids.map((id) => `o-${id}`) });
  }
  process.exit(2);
}

async function lockRace(dir: string): Promise<void> {
  const readFile = fsp.readFile.bind(fsp);
  let paused = false;
  // A slow disk or a GC pause between judging the lock and acting on it, made certain.
  fsp.readFile = (async (...args: Parameters<typeof fsp.readFile>) => {
    const result = await readFile(...args);
    if (!paused && path.basename(String(args[0])) === 'LOCK') {
      paused = true;
      await sleep(300);
    }
    return result;
  }) as typeof fsp.readFile;
  say({ booted: process.pid });
  await new Promise((resolve) => process.stdin.once('data', resolve));
  try {
    await acquireLock(dir);
    say({ locked: process.pid });
  } catch (error) {
    say({ refused: error instanceof Error ? error.message : String(error) });
  }
  // Holds the lock (alive) while the other one decides; bounded, should the test die first.
  await sleep(10_000);
  process.exit(0);
}

const args = process.argv.slice(2);
(args[0] === '--lock-race' ? lockRace(args[1]) : work(args[0], args[1], args[2])).catch((error) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
