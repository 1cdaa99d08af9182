import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { monitorCases, monitorEvidenceCaseId, monitorWindow, signalValue, type SessionSignal } from '@evals/domain';
import { MonitorWindowRepository, SuiteRepository } from '@evals/persistence';
import { DATA_SOURCE, LOGGER, type JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { IntakeError } from './intake-error';
import { RunIntakeService, type Causation } from './run-intake.service';

/**
 * The session monitor (D3). Each `evals.session.signal` is scored by every configured monitor suite: its
 * behavioural fields only (the contract refuses any other field, so no text of a session is ever read),
 * into one run per suite, subject and tumbling window. A window closes - its run is sealed and completes
 * like any other, with an EvalResult and a scorecard - once its end plus the grace period has passed;
 * a signal for a closed window is dead-lettered as LATE_SIGNAL. docs/monitor.md. A signal is scored in its
 * message's project (issue 30): the monitor suites are looked up there, and each project has its own windows
 * and window runs.
 */
@Injectable()
export class MonitorService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly suites = new SuiteRepository();
  private readonly windows = new MonitorWindowRepository();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(
    private readonly intake: RunIntakeService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(INGESTION_CONFIG) private readonly config: IngestionConfig,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  get enabled(): boolean {
    return this.config.monitorSuites.length > 0;
  }

  /** Scores one signal into the window run of every monitor suite. */
  async admit(signal: SessionSignal, cause: Causation, project: string): Promise<void> {
    if (!this.enabled) throw new IntakeError('UNKNOWN_RUN', 'the session monitor is not configured (EVALS_MONITOR_SUITES)', 'data');
    for (const key of this.config.monitorSuites) {
      const suite = await this.suites.find(this.db, project, key);
      if (!suite) throw new IntakeError('SUITE_NOT_FOUND', `monitor suite ${key} does not exist`, 'suite_key');
      const cases = monitorCases(suite.cases);
      if (!cases.ok) throw new IntakeError('SUITE_INVALID', `monitor suite ${key}: cases without a signal_field: ${cases.invalid.slice(0, 10).join(', ')}`, 'suite_key');
      // Run ids are unique across the service: outside `default` the window's run is named by the project too
      // (`monitor.<project>:<key>...`; a suite key has no `:`, so no default run id can be the same).
      const window = monitorWindow(project === DEFAULT_PROJECT ? key : `${project}:${key}`, signal.subject_kind, signal.subject_id, signal.occurred_at, this.config.monitorWindowSeconds / 60);
      const state = await this.windows.admit(this.db, project, {
        run_id: window.run_id,
        suite_key: key,
        subject_kind: signal.subject_kind,
        subject_id: signal.subject_id,
        window_start: window.start,
        window_end: window.end,
      });
      if (state === 'sealed') throw new IntakeError('LATE_SIGNAL', `the window ${window.start} of monitor suite ${key} has closed`, 'data.occurred_at');
      await this.intake.open(
        { run_id: window.run_id, project, suite_key: key, subject_kind: signal.subject_kind, subject_id: signal.subject_id, source: 'session_sample' },
        cause,
      );
      const items = cases.cases.map((c) => ({ case_id: monitorEvidenceCaseId(c.case_id, signal.session_id), output: signalValue(signal, c.field) }));
      await this.intake.forward(window.run_id, items, { ...cause, message_id: `${cause.message_id}:${key}` });
    }
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .catch((error) => this.logger.event('warn', 'monitor sweep failed; retrying', { error: error instanceof Error ? error.name : 'error' }))
        .finally(() => (this.sweeping = undefined));
    }, Math.min(5_000, Math.max(500, (this.config.monitorWindowSeconds * 1000) / 4)));
    this.timer.unref();
  }

  /** Seals every window whose end plus grace has passed. */
  async sweep(): Promise<string[]> {
    // Every project's windows (a system sweep): each run is sealed in the project its window was opened in.
    const sealed = await this.windows.sweep(this.db, this.config.monitorGraceSeconds, (runId, project) => this.intake.seal(runId, project, { message_id: `monitor-close:${runId}`, correlation_id: runId }));
    for (const runId of sealed) this.logger.event('info', 'monitor window closed', { run_id: runId });
    return sealed;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }
}
