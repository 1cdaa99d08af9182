import { SUBJECTS } from '@evals/contracts';
import { RUN_EVENTS } from '@evals/domain';
import { EventStore, ResultPublications, RunReadModelRepository } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { RUNS_PROJECTION, type ProjectorLogger, type RunProjector } from './run.projector';

const RUN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.values(RUN_EVENTS));

export interface RebuildOptions {
  /** Events read from the log per page (one projector micro-batch each). */
  readonly pageSize?: number;
  readonly logger?: ProjectorLogger;
}

export interface RebuildReport {
  readonly events: number;
  readonly applied: number;
  readonly duplicates: number;
  /** Malformed events skipped (they were dead-lettered when first delivered; not written again). */
  readonly skipped: number;
  /** Events of a run whose run.opened is not in the log at all (never the case for a healthy log). */
  readonly orphans: number;
  readonly runs: number;
  readonly evalResults: number;
  /** Regression decisions projected from `run.compared` (read_run_verdicts). */
  readonly verdicts: number;
  /** EvalResults that had never been announced before and got their outbox row now. */
  readonly published: number;
  readonly checkpoint: number;
}

/**
 * Rebuilds the run read model from the event log (docs/read-model.md, "Rebuild"): empties `runs`,
 * `eval_results`, `read_run_verdicts`, `read_case_results`, the `runs` inbox and checkpoint, then replays every event by position through the same
 * RunProjector the live consumer uses. Everything happens in ONE transaction: readers and the live consumer
 * keep the old model until the new one commits (they wait on the reset's lock), and a failed rebuild
 * changes nothing.
 *
 * EvalResults already announced are not announced again: other teams would receive each one twice, under a
 * new message id that JetStream's de-duplication cannot recognise. A result that was never announced (its
 * run.scored was still on its way to the live consumer when the rebuild claimed it) is announced now, or
 * it never would be: the live consumer will find that event already applied.
 */
export async function rebuildReadModel(dataSource: DataSource, projector: RunProjector, options: RebuildOptions = {}): Promise<RebuildReport> {
  const pageSize = options.pageSize ?? 1_000;
  const repo = new RunReadModelRepository();
  const store = new EventStore();
  return dataSource.transaction(async (sql) => {
    const announced = await new ResultPublications().runIds(sql, SUBJECTS.RESULT_RECORDED);
    await repo.reset(sql, RUNS_PROJECTION);
    let after = 0;
    let events = 0;
    let applied = 0;
    let duplicates = 0;
    let skipped = 0;
    let orphans = 0;
    let published = 0;
    for (;;) {
      const page = await store.readAll(sql, after, pageSize);
      if (page.length === 0) break;
      // The log also holds other apps' facts (calibration.reported: EVENT_AUTHORS); the run projection folds
      // the run's events only, as the live consumer, which the bus hands run events alone.
      const runEvents = page.filter((e) => RUN_EVENT_TYPES.has(e.type));
      const outcome = await projector.apply(sql, runEvents, {
        publish: (result) => !announced.has(result.run_id),
        recordDeadLetters: false,
      });
      events += runEvents.length;
      applied += outcome.applied;
      duplicates += outcome.duplicates;
      skipped += outcome.deadLettered;
      orphans += outcome.deferred;
      published += outcome.outboxRows;
      after = page[page.length - 1].position;
      options.logger?.event('info', 'rebuild progress', { events, position: after });
    }
    const [{ runs }] = await sql.query(`SELECT count(*)::int AS runs FROM runs`);
    const [{ results }] = await sql.query(`SELECT count(*)::int AS results FROM eval_results`);
    const [{ verdicts }] = await sql.query(`SELECT count(*)::int AS verdicts FROM read_run_verdicts`);
    return {
      events,
      applied,
      duplicates,
      skipped,
      orphans,
      runs,
      evalResults: results,
      verdicts,
      published,
      checkpoint: await repo.checkpoint(sql, RUNS_PROJECTION),
    };
  });
}
