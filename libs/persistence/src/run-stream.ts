import { foldRunView, parseRunEvent, RunModel, runStreamId, type FoldedRunView, type RunEvent, type RunState } from '@evals/domain';
import type { EventStore, StoredEvent } from './event-store';
import type { Sql } from './sql';

/** A run's state folded from its stream by the run's model, and the stream version to append after. */
export interface LoadedRun {
  readonly state: RunState;
  readonly version: number;
}

/** A run folded from its stream both ways: the run's model (state, version) and its view's facts (document, EvalResult, verdict). */
export type LoadedRunView = LoadedRun & FoldedRunView;

/**
 * The stream's events as the run events' codec reads them, with their times. An event that does not
 * validate is left out of the fold (it is in our own log, so this is a bug to surface in tests, not input
 * to trust).
 */
function decodedStream(stream: readonly StoredEvent[]): Array<{ event: RunEvent; occurred_at: string }> {
  const events = [];
  for (const e of stream) {
    const parsed = parseRunEvent(e);
    if (!('error' in parsed)) events.push({ event: parsed, occurred_at: e.metadata.occurred_at });
  }
  return events;
}

/** Folds stored events through the run's model (R7). The one place a run's stream is turned into facts: no caller reads the events by hand. */
export function foldStoredRun(stream: readonly StoredEvent[]): LoadedRun {
  return { state: RunModel.foldRun(decodedStream(stream)), version: stream.length };
}

/**
 * `foldStoredRun`, and the run's view folded from the same events as the read model projects them
 * (`foldRunView`): how an app other than the read model learns a run's document, EvalResult and verdict
 * (issue 27) without reading the read model's tables.
 */
export function foldStoredRunView(stream: readonly StoredEvent[]): LoadedRunView {
  const events = decodedStream(stream);
  return { state: RunModel.foldRun(events), version: stream.length, ...foldRunView(events) };
}

export async function loadRun(sql: Sql, store: EventStore, runId: string): Promise<LoadedRun> {
  return foldStoredRun(await store.readStream(sql, runStreamId(runId)));
}

/** `loadRun` for many runs in one query: every run asked for is in the map (a run never opened folds to no state). */
export async function loadRuns(sql: Sql, store: EventStore, runIds: readonly string[]): Promise<Map<string, LoadedRun>> {
  const streams = await store.readStreams(sql, runIds.map(runStreamId));
  return new Map(runIds.map((id) => [id, foldStoredRun(streams.get(runStreamId(id)) ?? [])]));
}
