import { randomUUID } from 'node:crypto';
import { encodeCaseOutcomes, type CaseResultV1, type RunComparedV1, type RunOpenedV1 } from '@evals/domain';
import { EventStore, type NewEvent, type StoredEvent, type Sql } from '@evals/persistence';

/**
 * Hand-made run events for the read-model tests, appended to the log the way the apps do it: run.opened,
 * run.sealed and run.scored on `run-<id>`, each cases.scored on its own `run-<id>.cases.<cause>` stream
 * (apps/scoring-worker). Timestamps are fixed, so two projections of the same log are byte-identical.
 */
export class RunScript {
  private readonly store = new EventStore();
  private version = 0;
  private minute = 0;
  readonly correlationId: string;

  constructor(
    readonly runId: string,
    readonly opened: Partial<RunOpenedV1> = {},
    /** Minutes after the fixed base time the run's first event happens (runs that follow one another). */
    startMinute = 0,
  ) {
    this.correlationId = `corr-${runId}`;
    this.minute = startMinute;
  }

  event(type: string, data: object): NewEvent {
    const base = Date.UTC(2026, 10, 30, 9, 0, 0);
    this.minute += 1;
    return {
      type,
      version: 1,
      data,
      metadata: {
        message_id: randomUUID(),
        correlation_id: this.correlationId,
        causation_id: randomUUID(),
        occurred_at: new Date(base + this.minute * 60_000).toISOString(),
      },
    };
  }

  openedEvent(): NewEvent {
    const data: RunOpenedV1 = {
      run_id: this.runId,
      suite_key: 'support-triage',
      suite_version: 3,
      suite_content_hash: 'sha256:abc',
      pass_threshold: 0.6,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'support-bot',
      variant: null,
      baseline_run_id: null,
      source: 'ci',
      case_count: 4,
      scorer_versions: { exact: '1.0.0' },
      ...this.opened,
    };
    return this.event('run.opened', data);
  }

  sealedEvent(reason?: 'client' | 'expired'): NewEvent {
    return this.event('run.sealed', reason === undefined ? { run_id: this.runId } : { run_id: this.runId, reason });
  }

  casesEvent(results: CaseResultV1[]): NewEvent {
    return this.event('cases.scored', { run_id: this.runId, results });
  }

  /**
   * cases.scored v3, as the scoring worker writes it now: the counts and the results of the rows a batch
   * inserted, columnar; `backfill` as the upgrade to v3 writes them (results only, counted before).
   */
  resultsEvent(results: CaseResultV1[], backfill = false): NewEvent {
    const event = this.event('cases.scored', {});
    const outcomes = results.map((r) => ({ ...r, judge_model: r.judge_model ?? null, prompt_version: r.judge_model === undefined ? null : (r.prompt_version ?? ''), scored_at: event.metadata.occurred_at }));
    const [data] = encodeCaseOutcomes(this.runId, outcomes, { backfill });
    return { ...event, version: 3, data };
  }

  /** cases.scored v2, as the scoring worker wrote it before v3: the counts of the rows a batch inserted. */
  countsEvent(n: number, passed: number, scoreSum: number): NewEvent {
    return { ...this.event('cases.scored', { run_id: this.runId, n, passed, score_sum: scoreSum }), version: 2 };
  }

  /** As the worker writes it; `expired` when the seal was the system's (R7), so the EvalResult says so. */
  scoredEvent(n: number, passed: number, scoreSum: number, missing: string[] = [], expired = false): NewEvent {
    return this.event('run.scored', { run_id: this.runId, n, passed, score_sum: scoreSum, missing_case_ids: missing, ...(expired ? { expired: true } : {}) });
  }

  /** The regression app's decision, as it records it on the run's stream (apps/regression). */
  comparedEvent(decision: Omit<RunComparedV1, 'run_id'>): NewEvent {
    return this.event('run.compared', { run_id: this.runId, ...decision });
  }

  /** Appends on the run's own stream (opened, sealed, scored, compared). */
  async appendRun(sql: Sql, event: NewEvent): Promise<StoredEvent> {
    const [stored] = await this.store.append(sql, `run-${this.runId}`, this.version, [event]);
    this.version += 1;
    return stored;
  }

  /** Appends a cases.scored batch on its own stream, as the scoring worker does. */
  async appendCases(sql: Sql, event: NewEvent): Promise<StoredEvent> {
    const [stored] = await this.store.append(sql, `run-${this.runId}.cases.${event.metadata.message_id}`, 0, [event]);
    return stored;
  }
}

export function result(caseId: string, score: number, passed = score >= 0.5, label = passed ? 'pass' : 'fail'): CaseResultV1 {
  return { case_id: caseId, scorer: 'exact', scorer_version: '1.0.0', score, passed, label };
}

/** The wire form of a stored event (libs/persistence toWire) without going through the outbox. */
export function asStored(event: NewEvent, position: number, streamId: string, streamVersion = 1): StoredEvent {
  return { ...event, position, stream_id: streamId, stream_version: streamVersion };
}

/** A deterministic permutation (tests must not depend on Math.random). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
