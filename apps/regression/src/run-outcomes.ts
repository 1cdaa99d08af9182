import { runOutcomes, type RunOutcomes } from '@evals/domain';
import { CaseOutcomeLog, type Sql } from '@evals/persistence';

/**
 * The per-case results of scored runs, folded on demand from their `cases.scored` events (issue 27) and kept
 * in memory: once `run.scored` is in the log, a run's results never change (the seal holds the run's lock
 * exclusively and a late output inserts nothing), and the same baseline is compared with run after run. The
 * compact form (RunOutcomes) holds a 100 000-case run in a few MiB; the cache holds the last `capacity` runs.
 *
 * Folded rather than projected into a regression-owned table: the decision runs when `run.scored` arrives,
 * and every `cases.scored` of the run was committed before it, so the log answers at once and completely -
 * a projection, fed through the bus in another order, would have to be waited on, and rebuilt.
 */
export class RunOutcomesCache {
  private readonly runs = new Map<string, RunOutcomes>();

  constructor(
    private readonly log = new CaseOutcomeLog(),
    private readonly capacity = 8,
    private readonly onInvalid?: (runId: string, invalid: number) => void,
  ) {}

  /**
   * The results of a scored run (callers ask only for runs whose `run.scored` they have seen); `known`, when
   * given, is that run's fold read already (`readMany`), kept here like one read now.
   */
  async of(sql: Sql, runId: string, known?: RunOutcomes): Promise<RunOutcomes> {
    const cached = this.runs.get(runId);
    if (cached) {
      // Most recently used last: Map keeps insertion order.
      this.runs.delete(runId);
      this.runs.set(runId, cached);
      return cached;
    }
    const folded = known ?? (await this.readMany(sql, [runId])).get(runId)!;
    this.runs.set(runId, folded);
    while (this.runs.size > this.capacity) this.runs.delete(this.runs.keys().next().value as string);
    return folded;
  }

  /** The results of many scored runs in one query (issue 28: a micro-batch's runs), not kept: `of` keeps those it is given. */
  async readMany(sql: Sql, runIds: readonly string[]): Promise<Map<string, RunOutcomes>> {
    const read = await this.log.forRuns(sql, runIds.filter((id) => !this.runs.has(id)));
    const folded = new Map<string, RunOutcomes>();
    for (const [runId, { outcomes, invalid }] of read) {
      if (invalid > 0) this.onInvalid?.(runId, invalid);
      folded.set(runId, runOutcomes(outcomes));
    }
    return folded;
  }
}
