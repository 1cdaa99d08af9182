import { Inject, Injectable } from '@nestjs/common';
import { subjectOf, type BusNames, type MessagePublisher } from '@evals/bus';
import { encodeWork, WORK_SUBJECTS, type WorkItem, type WorkMetadata } from '@evals/domain';
import { BUS_NAMES, CLOCK, MESSAGE_BUS, type Clock } from '@evals/platform';
import type { Causation } from './run-streams';

/** Work messages stay well under NATS's default 1 MiB max payload (JSON escaping can grow text). */
const MAX_WORK_ITEMS = 500;
const MAX_WORK_BYTES = 384 * 1024;

/**
 * Hands outputs and seals to the scoring workers (`evals.work.score`, `evals.work.seal`). Message ids derive
 * from the cause, in a fixed order, so the same request published again is de-duplicated by the bus.
 */
@Injectable()
export class WorkPublisher {
  constructor(
    @Inject(MESSAGE_BUS) private readonly publisher: MessagePublisher,
    @Inject(BUS_NAMES) private readonly names: BusNames,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * `detailKey`: the items carry their `detail_hash`, made with the key `detailKeyId` names; the messages say
   * so, and a worker with that key uses them instead of hashing every output again. Absent, they go without.
   */
  async forward(runId: string, items: readonly WorkItem[], cause: Causation, detailKey?: string): Promise<void> {
    let chunk: WorkItem[] = [];
    let bytes = 0;
    let index = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      const metadata = this.metadata(`${cause.message_id}:score:${index++}`, cause);
      const data = detailKey === undefined ? { run_id: runId, items: chunk } : { run_id: runId, detail_key: detailKey, items: chunk };
      const payload = encodeWork({ type: WORK_SUBJECTS.score, version: 1, data, metadata });
      await this.publisher.publish(subjectOf(this.names, WORK_SUBJECTS.score), payload, metadata.message_id);
      chunk = [];
      bytes = 0;
    };
    // A keyed item adds `,"detail_hash":"<64 hex>"`.
    const extra = detailKey === undefined ? 32 : 112;
    for (const item of items) {
      const size = Buffer.byteLength(item.output, 'utf8') * 2 + item.case_id.length + extra;
      if (chunk.length >= MAX_WORK_ITEMS || (chunk.length > 0 && bytes + size > MAX_WORK_BYTES)) await flush();
      // Without a key a stray `detail_hash` would make the message invalid (and it would not be vouched for).
      chunk.push(detailKey === undefined && item.detail_hash !== undefined ? { case_id: item.case_id, output: item.output } : item);
      bytes += size;
    }
    await flush();
  }

  async seal(runId: string, cause: Causation): Promise<void> {
    const metadata = this.metadata(`${cause.message_id}:seal`, cause);
    const payload = encodeWork({ type: WORK_SUBJECTS.seal, version: 1, data: { run_id: runId }, metadata });
    await this.publisher.publish(subjectOf(this.names, WORK_SUBJECTS.seal), payload, metadata.message_id);
  }

  private metadata(messageId: string, cause: Causation): WorkMetadata {
    return { message_id: messageId, correlation_id: cause.correlation_id, causation_id: cause.message_id, occurred_at: this.clock.now().toISOString() };
  }
}
