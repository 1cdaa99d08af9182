import { Inject, Injectable } from '@nestjs/common';
import { Coalescer } from '@evals/bus';
import { projectField } from '@evals/contracts';
import { RunModel, sampleCaseIds, suiteScorerVersions, type RunCommand, type RunOpenedV1, type RunState, type WorkItem } from '@evals/domain';
import { SuiteRepository, type LoadedRun, type SuiteVersionHead } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { busUnavailable, IntakeError, runIdConflict, underRunRules, unknownRun } from './intake-error';
import { hashRunRequest, requestMessageId, type RunRequestContent } from './run-request-hash';
import { RunStreams, type Causation } from './run-streams';
import { WorkPublisher } from './work-publisher';

export type { Causation } from './run-streams';

/**
 * What the intake needs of a suite version: its case ids and scorer versions. Suite versions are immutable
 * (V1), so this is cached - and only this: neither the suite's cases nor its compiled scorers stay in memory
 * (a 100 000-case suite compiled is ~60 MB of heap, and every version opened was kept), and a run's ticket
 * no longer loads its suite version a second time (issue 15). They are read without the cases' inputs and
 * tags, and no scorer is compiled per case (`suiteScorerVersions`); once cached, an open reads only the
 * version's row.
 */
interface SuiteFacts {
  readonly caseIds: readonly string[];
  readonly caseIdSet: ReadonlySet<string>;
  /** null: this version of the service cannot score the suite version (SUITE_INVALID; its case ids still name an opened run's cases). */
  readonly scorer_versions: Readonly<Record<string, string>> | null;
}

/** Suite versions whose facts are kept (their case ids: ~100 bytes a case). */
const MAX_CACHED_SUITES = 16;

/**
 * A request to open a run: its id and its content (`RunRequestContent`: suite, subject, outputs - present:
 * the run is complete with them and sealed once they are on the bus; absent: they follow - sample, judge).
 */
export interface OpenRunCommand extends RunRequestContent {
  readonly run_id: string;
  /** Issue 30: the project the run is opened in (the request's, or the message's); its suite is looked up there. */
  readonly project: string;
}

/** What the intake knows about an opened run. */
export interface RunTicket {
  readonly opened: RunOpenedV1;
  /** The cases this run scores: the suite version's, or its sample's (GT3). */
  readonly caseIds: ReadonlySet<string>;
  readonly allCaseIds: ReadonlySet<string>;
  /** The run's state, folded from its stream by the run model (R7). */
  readonly state: RunState;
  /** The stream version the state was folded at (the expected version of the next append). */
  readonly version: number;
}

/**
 * Opens runs, forwards outputs to the scoring workers and seals runs (docs/pipeline.md step 1). Shared by
 * the bus consumer and the HTTP API, so a run over NATS and the same run over HTTP are the same run. What
 * is appended to a run's stream is decided by the run model (`RunModel.decide` on the state folded from
 * the stream, R7); this service only reads, appends and publishes.
 */
/** The most suite heads one query reads: a micro-batch's run-opens, bounded. */
const MAX_HEAD_READS = 128;

@Injectable()
export class RunIntakeService {
  private readonly suiteFacts = new Map<string, SuiteFacts>();
  /** Opened runs never change (only their state does), so what the intake needs of them is cached, boundedly. */
  private readonly tickets = new Map<string, Omit<RunTicket, 'state' | 'version'>>();
  /** The suite heads the run-opens of one moment ask for, read in one query (issue 28: a read per open before). */
  private readonly heads = new Coalescer<{ project: string; suiteKey: string; version?: number }, SuiteVersionHead | null>(
    async (requests) => (await this.suites.heads(this.db, requests)).map((value) => ({ ok: true, value })),
    MAX_HEAD_READS,
  );

  constructor(
    private readonly streams: RunStreams,
    private readonly work: WorkPublisher,
    private readonly suites: SuiteRepository,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(INGESTION_CONFIG) private readonly config: Pick<IngestionConfig, 'hmacSecret'>,
  ) {}

  /**
   * Opens the run - idempotent on run_id: the same request again (same request hash) is the same run; other
   * content under the same id is RUN_ID_CONFLICT; an empty outputs list is EMPTY_RUN and records nothing.
   * With outputs (HTTP, or inline on the bus), the run is then completed in this order, so no run is left
   * sealed with outputs that never reached the bus: `run.opened`, every output published as
   * `evals.work.score`, `run.sealed`, `evals.work.seal`. The work message ids derive from the run id and the
   * request hash, so a retry of the same request after a failure anywhere in between completes the run
   * without scoring anything twice. A bus that does not take a message answers BUS_UNAVAILABLE (503).
   */
  async open(cmd: OpenRunCommand, cause: Causation): Promise<{ created: boolean; ticket: RunTicket }> {
    // The outputs come back sorted and keyed: the work messages carry their hashes on to the evidence.
    const { hash: requestHash, outputs, detailKey } = hashRunRequest(cmd, this.config.hmacSecret);
    // The stream is read once here; what the open and the seal below append is folded on, not read back.
    const loaded = await this.streams.load(cmd.run_id);
    // Issue 30: run ids are unique across the service; another project's run is a conflict like any other,
    // answered before anything of it (its cases, its outputs) is compared with the request.
    if (loaded.state.opened && RunModel.runProject(loaded.state) !== cmd.project) throw runIdConflict(cmd.run_id);
    const existing = await this.ticketOf(cmd.run_id, loaded);
    let opened: RunOpenedV1;
    if (existing) {
      // Nothing new is opened: the model compares the request hash with the one the run was opened with.
      if (cmd.outputs) checkOutputs(cmd.outputs, existing.allCaseIds);
      opened = existing.opened;
    } else {
      const suite = await this.heads.submit({ project: cmd.project, suiteKey: cmd.suite_key, version: cmd.suite_version });
      if (!suite) {
        const anyVersion = cmd.suite_version === undefined ? null : await this.suites.head(this.db, cmd.project, cmd.suite_key);
        throw anyVersion
          ? new IntakeError('SUITE_VERSION_NOT_FOUND', `suite ${cmd.suite_key} has no version ${cmd.suite_version}`, 'suite_version')
          : new IntakeError('SUITE_NOT_FOUND', `no suite with key ${cmd.suite_key}`, 'suite_key');
      }
      if (cmd.baseline_run_id) await this.checkBaseline(cmd.project, cmd.baseline_run_id, suite.suite_key);
      const facts = await this.factsOf(cmd.project, suite);
      const scorerVersions = facts.scorer_versions;
      if (!scorerVersions) throw new IntakeError('SUITE_INVALID', `suite ${suite.suite_key}@${suite.version} cannot be scored by this version of the service`, 'suite_key');
      const allCaseIds = facts.caseIds;
      if (cmd.outputs) checkOutputs(cmd.outputs, facts.caseIdSet);
      const sampled = cmd.sample ? sampleCaseIds(allCaseIds, cmd.sample) : null;
      opened = {
        run_id: cmd.run_id,
        // Issue 30: `default` is not written, so a default run's events are byte for byte those of before projects.
        ...projectField(cmd.project),
        suite_key: suite.suite_key,
        suite_version: suite.version,
        suite_content_hash: suite.content_hash,
        pass_threshold: suite.pass_threshold,
        regression_threshold: suite.regression_threshold,
        subject_kind: cmd.subject_kind,
        subject_id: cmd.subject_id,
        variant: cmd.variant ?? null,
        baseline_run_id: cmd.baseline_run_id ?? null,
        source: cmd.source,
        case_count: sampled ? sampled.length : allCaseIds.length,
        scorer_versions: scorerVersions,
        ...(cmd.sample && sampled ? { sample: { size: cmd.sample.size, seed: cmd.sample.seed, case_ids: sampled } } : {}),
        ...(cmd.judge_cache ? { judge_cache: true } : {}),
        ...(cmd.judge_skip ? { judge_skip: cmd.judge_skip } : {}),
        ...(cmd.judge_throttle ? { judge_throttle: { case_ids: [...cmd.judge_throttle.case_ids] } } : {}),
      };
    }
    const command: RunCommand = { type: 'open', data: opened, request_hash: requestHash, outputs: outputs ? outputs.length : null };
    // A concurrent request for the same run id may win the append: decided again, it is the same run if it
    // asked the same thing, else RUN_ID_CONFLICT.
    const { appended: created, run } = await underRunRules(() => this.streams.decide(cmd.run_id, command, cause, loaded));
    // Another project's open of the same id that won the race, with the same request: still not this run.
    if (RunModel.runProject(run.state) !== cmd.project) throw runIdConflict(cmd.run_id);
    let ticket = (await this.ticketOf(cmd.run_id, run))!;
    if (outputs) {
      const work: Causation = { message_id: requestMessageId(cmd.run_id, requestHash), correlation_id: cause.correlation_id };
      await this.onTheBus(() => this.work.forward(cmd.run_id, outputs.filter((o) => ticket.caseIds.has(o.case_id)), work, detailKey));
      // Only now that every output is on the bus: sealed (a no-op when a previous attempt got this far).
      const sealed = await underRunRules(() => this.streams.decide(cmd.run_id, { type: 'seal', run_id: cmd.run_id, received: outputs.length }, cause, ticket));
      await this.onTheBus(() => this.work.seal(cmd.run_id, work));
      ticket = (await this.ticketOf(cmd.run_id, sealed.run))!;
    }
    return { created, ticket };
  }

  /**
   * G5: an explicit baseline must be a run of the same suite key whose regression decision is recorded
   * (`run.compared` on its stream, so the regression app can compare with it), refused up front otherwise.
   */
  private async checkBaseline(project: string, baselineRunId: string, suiteKey: string): Promise<void> {
    const { state } = await this.streams.load(baselineRunId);
    // Another project's run is no run here (issue 30): the same refusal as a run that does not exist.
    if (!state.opened || RunModel.runProject(state) !== project || state.phase !== 'compared') throw new IntakeError('BASELINE_NOT_FOUND', `baseline ${baselineRunId} is not a completed run`, 'baseline_run_id');
    if (state.opened.suite_key !== suiteKey) {
      throw new IntakeError('BASELINE_OTHER_SUITE', `baseline ${baselineRunId} is a run of suite ${state.opened.suite_key}, not ${suiteKey}`, 'baseline_run_id');
    }
  }

  /**
   * The run as the intake sees it, folded from its own stream; null when never opened - or opened in another
   * project than `project` (issue 30): the caller answers both alike, as an unknown run.
   */
  async ticket(runId: string, project: string): Promise<RunTicket | null> {
    const loaded = await this.streams.load(runId);
    if (loaded.state.opened && RunModel.runProject(loaded.state) !== project) return null;
    return this.ticketOf(runId, loaded);
  }

  private async ticketOf(runId: string, { state, version }: LoadedRun): Promise<RunTicket | null> {
    const data = state.opened;
    if (!data) return null;
    const cached = this.tickets.get(runId);
    if (cached) return { ...cached, state, version };
    const project = RunModel.runProject(state);
    let allCaseIds = this.suiteFacts.get(factsKey(project, data.suite_key, data.suite_version))?.caseIdSet;
    if (!allCaseIds) {
      const suite = await this.suites.head(this.db, project, data.suite_key, data.suite_version);
      allCaseIds = suite ? (await this.factsOf(project, suite)).caseIdSet : new Set<string>();
    }
    const ticket = { opened: data, allCaseIds, caseIds: data.sample ? new Set(data.sample.case_ids) : allCaseIds };
    if (this.tickets.size >= 10_000) this.tickets.delete(this.tickets.keys().next().value!);
    this.tickets.set(runId, ticket);
    return { ...ticket, state, version };
  }

  /** Whether the run was sealed when its ticket was read (the run model's answer). */
  sealedIn(ticket: RunTicket): boolean {
    return RunModel.isSealed(ticket.state);
  }

  /**
   * Seals the run (`evals.run.sealed`, a monitor window's close): the model decides `run.sealed` (nothing
   * when it is sealed already), then the seal is forwarded to the workers. A run never opened is UNKNOWN_RUN,
   * and so is a run of another project than `project` (issue 30).
   */
  async seal(runId: string, project: string, cause: Causation, known?: RunTicket): Promise<void> {
    // The model refuses another project's run on every attempt of the decision (a retry re-reads the stream).
    await underRunRules(() => this.streams.decide(runId, { type: 'seal', run_id: runId, project }, cause, known));
    await this.work.seal(runId, cause);
  }

  /**
   * R7: seals a run nobody sealed, once its time is up (`run.sealed` with reason `expired`); its missing cases
   * are then scored `missing_output` like any seal's. Nothing when it was sealed meanwhile. Returns whether
   * this call expired it.
   */
  async expire(runId: string, now: Date, ttlSeconds: number): Promise<boolean> {
    const cause: Causation = { message_id: `expire:${runId}`, correlation_id: runId };
    const expired = await underRunRules(() => this.streams.decideAndAppend(runId, { type: 'expire', run_id: runId, now: now.toISOString(), ttl_seconds: ttlSeconds }, cause));
    // Forwarded even when another process appended the seal first: the seal message de-duplicates.
    const { state } = await this.streams.load(runId);
    if (state.seal_reason === 'expired') await this.work.seal(runId, cause);
    return expired;
  }

  /** Hands a sealed run's seal to the workers again (its first seal message was lost); a scored run ignores it. */
  resendSeal(runId: string): Promise<void> {
    return this.work.seal(runId, { message_id: `reseal:${runId}`, correlation_id: runId });
  }

  /**
   * Forwards outputs that follow over the bus (`evals.output.submitted`, a monitor signal). The run's first
   * output is recorded on its stream before it is forwarded (`outputs.received`, once), so a seal can tell a
   * run that received outputs from one that received none (EMPTY_RUN); a crash in between redelivers the
   * inbound messages, which then forward. `known`: the run's ticket, just read by the caller (saves a read);
   * returned as it is after the forward.
   */
  async forward(runId: string, items: readonly WorkItem[], cause: Causation, known?: RunTicket): Promise<RunTicket | undefined> {
    if (items.length === 0) return known;
    const { run } = await underRunRules(() => this.streams.decide(runId, { type: 'receive_outputs', run_id: runId }, cause, known));
    await this.work.forward(runId, items, cause);
    // The run as it is now (folded, not read back): a seal that follows in the same batch decides on it.
    return known && { ...known, state: run.state, version: run.version };
  }

  /** Publishes on the request's behalf: a bus that does not take the message is a retryable 503, not a 500. */
  private async onTheBus(publish: () => Promise<void>): Promise<void> {
    try {
      await publish();
    } catch (error) {
      throw busUnavailable(error);
    }
  }

  /**
   * The suite version's facts, read once: its case ids in suite order, and its scorer versions as
   * `compileSuite` gives them (each distinct scorer spec validated once), or null when this version of the
   * service cannot score it - kept too, since an opened run's ticket still needs its case ids.
   */
  private async factsOf(project: string, suite: SuiteVersionHead): Promise<SuiteFacts> {
    const key = factsKey(project, suite.suite_key, suite.version);
    let facts = this.suiteFacts.get(key);
    if (!facts) {
      const cases = await this.suites.caseScorers(this.db, project, suite.suite_key, suite.version);
      let scorerVersions: Readonly<Record<string, string>> | null;
      try {
        scorerVersions = suiteScorerVersions({ ...suite, cases });
      } catch {
        scorerVersions = null;
      }
      const caseIds = cases.map((c) => c.case_id);
      facts = { caseIds, caseIdSet: new Set(caseIds), scorer_versions: scorerVersions };
      if (this.suiteFacts.size >= MAX_CACHED_SUITES) this.suiteFacts.delete(this.suiteFacts.keys().next().value!);
      this.suiteFacts.set(key, facts);
    }
    return facts;
  }
}

/** The cache key of a suite version's facts: a suite key is unique per project only (issue 30). */
function factsKey(project: string, suiteKey: string, version: number): string {
  return `${project}\0${suiteKey}@${version}`;
}

/** R1: an output for an unknown case id is refused, naming the case; two outputs for one case too. */
function checkOutputs(outputs: readonly WorkItem[], caseIds: ReadonlySet<string>): void {
  const seen = new Set<string>();
  outputs.forEach((o, i) => {
    if (!caseIds.has(o.case_id)) throw new IntakeError('UNKNOWN_CASE', `case ${o.case_id} is not in the suite version`, `outputs[${i}].case_id`);
    if (seen.has(o.case_id)) throw new IntakeError('DUPLICATE_OUTPUT', `case ${o.case_id} has more than one output`, `outputs[${i}].case_id`);
    seen.add(o.case_id);
  });
}
