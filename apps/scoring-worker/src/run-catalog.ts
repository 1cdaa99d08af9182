import { Inject, Injectable, Optional } from '@nestjs/common';
import { compileSuite, RunModel, SuiteCompileError, SuiteStreamError, suiteStreamId, type CompiledSuite, type RunOpenedV1, type RunState } from '@evals/domain';
import { BoundedCache, EventStore, SuiteVersions, loadRun, loadRuns, type Sql, type SuiteVersionWithCases } from '@evals/persistence';

/**
 * What scoring a run's outputs needs to know about it, answered by the run's model (R7) from its stream.
 * Every field is fixed by `run.opened` (a run is opened once), so it may be cached; the run's phase is not,
 * and is never cached here (a seal loads the run again inside its transaction).
 */
export interface OpenedRun {
  readonly opened: RunOpenedV1;
  /**
   * Issue 30: the run's project (`runProject`: what `run.opened` names, `default` before projects). Its
   * suite version is looked up in it, and its judge's verdict cache is keyed by it.
   */
  readonly project: string;
  /** GT4: the label its judge cases get instead of a call (`RunModel.judgeSkipLabel`), or null. */
  readonly judgeSkip: string | null;
  /** GT4 per case (`RunModel.judgeSkipLabelFor`): `judgeSkip`, or `budget_throttled` outside a throttle's room, or null. */
  readonly judgeSkipFor: (caseId: string) => string | null;
  /** A monitor run (D3): its cases are the sessions sampled in its window (`RunModel.isMonitorRun`). */
  readonly monitor: boolean;
}

/**
 * Compiled cases the suite cache holds at most (issue 15): a compiled case is about 500 bytes, so ~100 MB.
 * Bounded by cases, not versions: 64 versions of 100 000 cases would be gigabytes.
 */
export const SUITE_CACHE_CASES = 200_000;
/** Optional provider of another bound (tests). */
export const SUITE_CACHE_CASES_TOKEN = 'RUN_CATALOG_SUITE_CACHE_CASES';

/**
 * The runs and suite versions the worker scores against. A run is folded through the run's model (never
 * read by hand), a suite version from its `suite.published` stream (never the ingestion's tables, issue 27);
 * its `run.opened` facts and its suite version, compiled, are immutable once written (a suite version never
 * changes - V2), so both are cached in memory, bounded; only what was found is cached.
 */
@Injectable()
export class RunCatalog {
  private readonly runs = new BoundedCache<string, OpenedRun>(20_000);
  private readonly suites: BoundedCache<string, CompiledSuite>;

  constructor(
    private readonly events: EventStore,
    /** The versions folded from their streams, uncached there (`workerSuiteVersions`): this catalog caches them compiled. */
    private readonly suiteVersions: SuiteVersions,
    /** The suite cache's bound in compiled cases; the version in use is kept even when larger alone. */
    @Optional() @Inject(SUITE_CACHE_CASES_TOKEN) suiteCacheCases?: number,
  ) {
    this.suites = new BoundedCache<string, CompiledSuite>(suiteCacheCases ?? SUITE_CACHE_CASES, (suite) => Math.max(1, suite.cases.size));
  }

  /** The run's opening facts, or null while the run is unknown (not opened). */
  async run(sql: Sql, runId: string): Promise<OpenedRun | null> {
    const cached = this.runs.get(runId);
    if (cached) return cached;
    return this.remember(runId, (await loadRun(sql, this.events, runId)).state);
  }

  /** Reads the runs not cached yet in one query (a micro-batch's new runs, issue 28), so `run` answers them from memory. */
  async prefetch(sql: Sql, runIds: readonly string[]): Promise<void> {
    const missing = runIds.filter((id) => this.runs.get(id) === undefined);
    if (missing.length < 2) return;
    for (const [runId, { state }] of await loadRuns(sql, this.events, missing)) this.remember(runId, state);
  }

  private remember(runId: string, state: RunState): OpenedRun | null {
    if (!state.opened) return null;
    const run: OpenedRun = {
      opened: state.opened,
      project: RunModel.runProject(state),
      judgeSkip: RunModel.judgeSkipLabel(state),
      judgeSkipFor: RunModel.judgeSkipLabelFor(state),
      monitor: RunModel.isMonitorRun(state),
    };
    this.runs.set(runId, run);
    return run;
  }

  /**
   * The compiled suite version of the project, or null when it is not stored. Throws SuiteCompileError when
   * not scorable. Cached by its stream id, which names the project (issue 30): the same suite key and
   * version of two projects are two entries.
   */
  async suite(sql: Sql, project: string, suiteKey: string, version: number): Promise<CompiledSuite | null> {
    const key = suiteStreamId(project, suiteKey, version);
    const cached = this.suites.get(key);
    if (cached) return cached;
    let record: SuiteVersionWithCases | null;
    try {
      record = await this.suiteVersions.find(sql, project, suiteKey, version);
    } catch (error) {
      // A stream that does not fold will not get better: its runs are not scorable (dead-lettered with the code).
      if (error instanceof SuiteStreamError) throw new SuiteCompileError(`suite ${suiteKey} v${version}: ${error.message}`);
      throw error;
    }
    if (!record) return null;
    const compiled = compileSuite(record);
    this.suites.set(key, compiled);
    return compiled;
  }
}

/** The worker's SuiteVersions: no cache of folded versions beside the catalog's compiled ones. */
export function workerSuiteVersions(events: EventStore): SuiteVersions {
  return new SuiteVersions(events, 0);
}
