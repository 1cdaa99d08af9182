import { Injectable } from '@nestjs/common';
import { RunModel, type RunJudgeUsageV1, type VerdictStability } from '@evals/domain';
import type { RunView, SuiteVersionWithCases } from '@evals/persistence';
import { IntakeError, unknownRun } from './intake-error';
import { RunIntakeService, type Causation, type OpenRunCommand } from './run-intake.service';
import { RunStreams } from './run-streams';
import { RunWaiter } from './run-waiter';
import { SuiteCatalogService } from './suite-catalog.service';

/**
 * The run a gate judges (GT1, GT3): its suite version, the run itself - opened through the intake like any
 * run and waited for until it is completed and compared, or an existing completed run of the same suite -
 * and what its judge did, as the run's model folds its stream (R7).
 */
@Injectable()
export class GateRuns {
  constructor(
    private readonly suites: SuiteCatalogService,
    private readonly intake: RunIntakeService,
    private readonly waiter: RunWaiter,
    private readonly streams: RunStreams,
  ) {}

  /** The suite version in the gate's project (issue 30: another project's key is no suite here). */
  async suite(project: string, key: string, version: number | undefined): Promise<SuiteVersionWithCases> {
    const suite = await this.suites.find(project, key, version);
    if (!suite) throw new IntakeError('SUITE_NOT_FOUND', `no suite ${key}${version ? ` version ${version}` : ''}`, 'suite_key');
    return suite;
  }

  /** Opens the gate's run (idempotent on its run id) and waits until it is completed and compared. */
  async run(command: OpenRunCommand, cause: Causation): Promise<RunView> {
    await this.intake.open(command, cause);
    return this.waiter.completed(command.run_id, { includeCases: true });
  }

  /**
   * An existing run to gate: it must exist in the gate's project (UNKNOWN_RUN, also for another project's run -
   * issue 30), be completed (RUN_PENDING) and be a run of the suite.
   */
  async existing(project: string, runId: string, suiteKey: string): Promise<RunView> {
    const found = await this.waiter.find(runId, project, { includeCases: true });
    if (!found) throw unknownRun(runId);
    if (found.run.status !== 'completed') throw new IntakeError('RUN_PENDING', `run ${runId} is not completed yet`, 'run_id');
    if (found.run.suite_key !== suiteKey) throw new IntakeError('INVALID_REQUEST', `run ${runId} is a run of suite ${found.run.suite_key}`, 'run_id');
    return this.waiter.completed(runId, { includeCases: true });
  }

  /** What the judge did for the run, from its `run.scored` as the run's model folds the stream (R7). */
  async judgeUsage(runId: string): Promise<RunJudgeUsageV1 | null> {
    const { state } = await this.streams.load(runId);
    return state.result?.judge ?? null;
  }

  /** Issue 13: the run's verdict stability with its Wilson interval, as the run's model answers it; null without repeats. */
  async judgeStability(runId: string): Promise<VerdictStability | null> {
    const { state } = await this.streams.load(runId);
    return RunModel.judgeStability(state);
  }
}
