import { Inject, Injectable } from '@nestjs/common';
import { LOG_ONLY_RUN_EVENTS, RunModel, runStreamId, type RunCommand, type RunEvent } from '@evals/domain';
import { Coalescer } from '@evals/bus';
import { EventStore, loadRuns, RunExpiryQueries, StreamVersionConflict, type LoadedRun, type NewEvent } from '@evals/persistence';
import { CLOCK, DATA_SOURCE, ID_GENERATOR, type Clock, type IdGenerator } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { GroupedAppends } from './grouped-appends';

/** Who asked: work message and event ids derive from it, so a retry is recognised as the same request. */
export interface Causation {
  /** Id of the message or request that caused this; work message ids derive from it (de-duplication). */
  readonly message_id: string;
  readonly correlation_id: string;
}

/** The most runs one stream read takes. */
const MAX_LOADS = 256;

/** Appends that lost a race to another writer of the same run are decided again on the new state. */
const MAX_APPEND_ATTEMPTS = 5;

/**
 * The intake's access to run streams (R7): a run is read only as the run model folds it, and written only
 * with what the model decided on the state it was folded at (optimistic concurrency on the stream).
 */
@Injectable()
export class RunStreams {
  private readonly appends: GroupedAppends;
  private readonly loads: Coalescer<string, LoadedRun>;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly events: EventStore,
    private readonly expiry: RunExpiryQueries,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {
    this.appends = new GroupedAppends(db, events, { logOnly: LOG_ONLY_RUN_EVENTS });
    this.loads = new Coalescer(async (runIds) => {
      const runs = await loadRuns(db, events, runIds);
      return runIds.map((id) => ({ ok: true, value: runs.get(id)! }));
    }, MAX_LOADS);
  }

  /** The run folded from its stream; the runs asked for at about the same time (a batch's lanes) are read in one query. */
  load(runId: string): Promise<LoadedRun> {
    return this.loads.submit(runId);
  }

  /**
   * Decides the command on the run's current state and appends what it decided, at the version it was
   * decided on; another writer that appended first makes it decide again on the new state. Returns whether
   * anything was appended. Throws `RunRuleError` when the command breaks a rule of the model.
   */
  async decideAndAppend(runId: string, command: RunCommand, cause: Causation): Promise<boolean> {
    return (await this.decide(runId, command, cause)).appended;
  }

  /**
   * `decideAndAppend`, and the run as it is afterwards (folded here, not read back). `known` is a state the
   * caller has just read: decided on first, it saves a read; if it is stale the append conflicts and the
   * command is decided again on the stream as it is, and a refusal on it is checked on a fresh read too,
   * so the answer is the same as without it.
   */
  async decide(runId: string, command: RunCommand, cause: Causation, known?: LoadedRun): Promise<{ appended: boolean; run: LoadedRun }> {
    let current = known ?? (await this.load(runId));
    let fresh = known === undefined;
    for (let attempt = 1; ; attempt++) {
      let decided: RunEvent[];
      try {
        decided = RunModel.decide(command, current.state);
      } catch (error) {
        if (fresh) throw error;
        current = await this.load(runId);
        fresh = true;
        continue;
      }
      if (decided.length === 0) return { appended: false, run: current };
      const events = decided.map((e) => this.event(e, cause));
      try {
        // With the appends of the other runs deciding now (the micro-batch's lanes): one transaction for all.
        // Their outbox rows are published at that commit by this process's relay (outbox-dispatch.ts).
        await this.appends.append(runStreamId(runId), current.version, events);
      } catch (error) {
        if (!(error instanceof StreamVersionConflict) || attempt >= MAX_APPEND_ATTEMPTS) throw error;
        current = await this.load(runId);
        fresh = true;
        continue;
      }
      let state = current.state;
      decided.forEach((e, i) => (state = RunModel.evolve(state, e, events[i].metadata.occurred_at)));
      return { appended: true, run: { state, version: current.version + decided.length } };
    }
  }

  /** Runs opened before `cutoff` and never sealed: the expiry sweep's candidates (the model decides each). */
  openBefore(cutoff: Date, limit: number): Promise<string[]> {
    return this.expiry.openBefore(this.db, cutoff.toISOString(), limit);
  }

  /** Runs sealed before `cutoff` and never scored: their seal is handed to the workers again. */
  sealedNotScoredBefore(cutoff: Date, limit: number): Promise<string[]> {
    return this.expiry.sealedNotScoredBefore(this.db, cutoff.toISOString(), limit);
  }

  now(): Date {
    return this.clock.now();
  }

  private event(event: RunEvent, cause: Causation): NewEvent {
    return {
      type: event.type,
      version: event.version,
      data: event.data,
      metadata: { message_id: this.ids.uuid(), correlation_id: cause.correlation_id, causation_id: cause.message_id, occurred_at: this.clock.now().toISOString() },
    };
  }
}
