/**
 * A process that is killed (SIGKILL) mid-work by in-process.bus.int-spec.ts: it publishes work and inbound
 * messages as fast as it can and acknowledges the inbound ones, printing one JSON line per confirmed fact.
 * Usage: node -r @swc-node/register in-process.bus.probe.ts DIR STREAM_PREFIX SUBJECT_PREFIX
 */
import { InProcessBus } from './in-process.bus';
import { CONSUMERS, subjectOf, type BusNames } from './topology';

async function main(): Promise<void> {
  const [dir, streamPrefix, subjectPrefix] = process.argv.slice(2);
  const names: BusNames = { streamPrefix, subjectPrefix };
  const bus = await InProcessBus.open(names, { dir });
  await bus.ensureTopology();
  const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
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

main().catch((error) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
