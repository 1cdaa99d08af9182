import { Inject, Injectable } from '@nestjs/common';
import type { WorkMetadata } from '@evals/domain';
import { StreamVersionConflict, type EventMetadata } from '@evals/persistence';
import { CLOCK, ID_GENERATOR, type Clock, type IdGenerator } from '@evals/platform';

/**
 * The worker's clock and ids: when evidence is scored, and the metadata of the events it appends - a new id,
 * the work message that caused it, and the correlation id carried over from it.
 */
@Injectable()
export class EventStamper {
  constructor(
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /** Now, as evidence records it (`scored_at`). */
  now(): string {
    return this.clock.now().toISOString();
  }

  metadata(cause: WorkMetadata): EventMetadata {
    const correlation = typeof cause.correlation_id === 'string' && cause.correlation_id !== '' ? cause.correlation_id : cause.message_id;
    return {
      message_id: this.ids.uuid(),
      correlation_id: correlation,
      causation_id: cause.message_id,
      occurred_at: this.clock.now().toISOString(),
    };
  }
}

/**
 * A StreamVersionConflict rolls the whole transaction back. It means another process wrote the same
 * stream first (the seal of a redelivered message); doing the work again sees its result and does nothing.
 */
export async function withConflictRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof StreamVersionConflict) || attempt >= attempts) throw error;
    }
  }
}
