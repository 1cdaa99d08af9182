/**
 * Micro-benchmark of the inbound codec (issue 15): `decodeMessage` of `evals.output.submitted` (one output,
 * the streamed path) and of `evals.run.requested` with 2 000 inline outputs (the batched path), in this
 * process, no servers: microseconds of CPU per output. Prints numbers, asserts nothing.
 *   node -r @swc-node/register bench/codec/decode.bench.ts
 */
import { performance } from 'node:perf_hooks';
import { decodeMessage, SUBJECTS } from '@evals/contracts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const meta = (i: number) => ({ message_id: `m-${i}`, correlation_id: `c-${i}`, causation_id: `c-${i}`, occurred_at: '2026-12-01T10:00:00.000Z' });
const output = (i: number) => `answer-${i} the agent answered the customer about the shipping invoice status and the ticket priority queue; resolved, pending update, thanks, please note the team ${i}`;

const submitted = Array.from({ length: 20_000 }, (_, i) =>
  Buffer.from(JSON.stringify({ schema: `${SUBJECTS.OUTPUT_SUBMITTED}.v1`, type: SUBJECTS.OUTPUT_SUBMITTED, version: 1, data: { run_id: 'run-1', case_id: `c${i}`, output: output(i) }, metadata: meta(i) })),
);
const requested = Array.from({ length: 10 }, (_, k) =>
  Buffer.from(
    JSON.stringify({
      schema: `${SUBJECTS.RUN_REQUESTED}.v1`,
      type: SUBJECTS.RUN_REQUESTED,
      version: 1,
      data: { run_id: `run-${k}`, suite_key: 'bench', subject_kind: 'agent', subject_id: 'bench', source: 'ci', outputs: Array.from({ length: 2_000 }, (_, i) => ({ case_id: `c${i}`, output: output(i) })) },
      metadata: meta(k),
    }),
  ),
);

function time(label: string, messages: Buffer[], subject: string, outputsPer: number): void {
  const results: number[] = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t = performance.now();
    for (const m of messages) if (!decodeMessage(subject, m).ok) throw new Error('refused');
    if (r > 0) results.push(((performance.now() - t) * 1000) / (messages.length * outputsPer)); // round 0 warms the JIT
  }
  results.sort((a, b) => a - b);
  process.stdout.write(`${label.padEnd(48)} median ${results[Math.floor(results.length / 2)].toFixed(2)} us per output (min ${results[0].toFixed(2)})\n`);
}

time('evals.output.submitted, one output each', submitted, SUBJECTS.OUTPUT_SUBMITTED, 1);
time('evals.run.requested, 2 000 inline outputs each', requested, SUBJECTS.RUN_REQUESTED, 2_000);
