import { parseRunEvent, RunModel, runStreamId, type RunState } from '@evals/domain';
import type { EventStore, StoredEvent } from './event-store';
import type { Sql } from './sql';

/** A run's state folded from its stream by the run's model, and the stream version to append after. */
export interface LoadedRun {
  readonly state: RunState;
  readonly version: number;
}

/**
 * Folds stored events through the run's model (R7). The one place a run's stream is turned into facts: no
 * caller reads the events by hand. An event that does not validate is left out of the fold (it is in our
 * own log, so this is a bug to surface in tests, not input to trust).
 */
export function foldStoredRun(stream: readonly StoredEvent[]): LoadedRun {
  const events = [];
  for (const e of stream) {
    const parsed = parseRunEvent(e);
    if (!('error' in parsed)) events.push({ event: parsed, occurred_at: e.metadata.occurred_at });
  }
  return { state: RunModel.foldRun(events), version: stream.length };
}

export async function loadRun(sql: Sql, store: EventStore, runId: string): Promise<LoadedRun> {
  return foldStoredRun(await store.readStream(sql, runStreamId(runId)));
}
