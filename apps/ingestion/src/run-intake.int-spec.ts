import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { TimeoutError } from '@nats-io/nats-core';
import { DEFAULT_PROJECT, encodeMessage, serializeMessage, SUBJECTS } from '@evals/contracts';
import { subjectOf, type ConsumeOptions, type InProcessBus, type ConsumerSpec, type MessageBus, type PublishAck, type Subscription } from '@evals/bus';
import { compileSuite, runStreamId, WORK_SUBJECTS } from '@evals/domain';
import { createDataSource, SuiteRepository } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { eventually } from '../../../test/support/app-processes';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
// The all-in-one composition (the four apps on one infrastructure), so POST /v1/runs completes in-process.
import { startAllInOne } from './all-in-one.testing';
import { RunIntakeService } from './run-intake.service';
import { RunStreams } from './run-streams';
import type { WorkPublisher } from './work-publisher';

/** D1 canary: in every output; it must appear in no table. */
const CANARY = `CANARY${randomUUID().replace(/-/g, '')}`;

/**
 * The real in-process bus, with a switch that makes the N-th publish on one work subject fail as JetStream's
 * publish fails on a timeout (nats-core's TimeoutError). It also records, at each work publish, whether the
 * run's stream held `run.sealed` already - the order the intake promises (outputs on the bus, then sealed).
 */
class FlakyBus implements MessageBus {
  private failure: { subject: string; nth: number; seen: number } | null = null;
  readonly workPublishes: Array<{ subject: string; messageId: string; sealedBefore: boolean; duplicate: boolean | null }> = [];
  /** Run id whose stream is inspected at each work publish. */
  watch: string | null = null;

  constructor(
    private readonly inner: InProcessBus,
    private readonly ds: () => DataSource | undefined,
  ) {}

  get names() {
    return this.inner.names;
  }
  get healthy() {
    return this.inner.healthy;
  }

  /** The `nth` publish (1-based) on `evals.work.<kind>` from now on fails once. */
  failOn(kind: 'score' | 'seal', nth: number): void {
    this.failure = { subject: kind === 'score' ? WORK_SUBJECTS.score : WORK_SUBJECTS.seal, nth, seen: 0 };
  }

  async publish(subject: string, payload: Uint8Array | string, messageId: string): Promise<PublishAck> {
    const work = subject.endsWith(WORK_SUBJECTS.score) || subject.endsWith(WORK_SUBJECTS.seal);
    const entry = { subject, messageId, sealedBefore: false, duplicate: null as boolean | null };
    if (work && this.watch) {
      const rows = await this.ds()!.query(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1 AND type = 'run.sealed'`, [runStreamId(this.watch)]);
      entry.sealedBefore = rows[0].n > 0;
      this.workPublishes.push(entry);
    }
    const f = this.failure;
    if (f && subject.endsWith(f.subject) && ++f.seen === f.nth) {
      this.failure = null;
      throw new TimeoutError();
    }
    const ack = await this.inner.publish(subject, payload, messageId);
    entry.duplicate = ack.duplicate;
    return ack;
  }

  ensureTopology(): Promise<void> {
    return this.inner.ensureTopology();
  }
  consume(consumer: ConsumerSpec, options: ConsumeOptions): Promise<Subscription> {
    return this.inner.consume(consumer, options);
  }
  allAcknowledgedBefore(consumer: ConsumerSpec, seq: number): Promise<boolean> {
    return this.inner.allAcknowledgedBefore(consumer, seq);
  }
  pending(consumer: ConsumerSpec): Promise<number> {
    return this.inner.pending(consumer);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly json: any;
}

jest.setTimeout(120_000);

/**
 * The intake through the run model (R7, issue 12), over HTTP on the all-in-one composition with real
 * PostgreSQL (a schema of its own) and the real in-process bus: an empty run is refused and records nothing,
 * a repeated request is the same run, other content under the same id is a conflict, and `run.sealed` is
 * appended only once every output is on the bus - so a bus failure half-way answers 503 and the same request
 * again completes the run.
 */
describe('integration: POST /v1/runs decided by the run model (R7)', () => {
  let schema: TestSchema;
  let ds: DataSource | undefined;
  let app: NestExpressApplication;
  let bus: FlakyBus;
  let base: string;
  const logLines: string[] = [];
  const key = 'intake-r7';

  beforeAll(async () => {
    schema = await createTestSchema('intake');
    ({ app, base } = await startAllInOne(
      schema.schema,
      // Short, so the expiry test sees an open run expire (the other runs are sealed within it).
      { EVALS_HMAC_SECRET: 'intake-test-secret-0123456789abcdef', LOG_LEVEL: 'info', EVALS_RUN_TTL_SECONDS: '2' },
      (line) => void logLines.push(line),
      (inner) => (bus = new FlakyBus(inner, () => ds)),
    ));
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    const pushed = await post('/v1/suites', {
      key,
      default_scorer: { type: 'exact' },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      cases: Array.from({ length: 600 }, (_, i) => ({ id: `c${String(i).padStart(3, '0')}`, input: `question ${i}`, expected: 'yes' })),
    });
    expect(pushed.status).toBe(201);
  });

  afterAll(async () => {
    try {
      if (ds) {
        // D1: no output in any table (the request hash keeps hashes of them only).
        for (const table of ['events', 'outbox', 'evidence', 'dead_letters']) {
          const [{ leaks }] = await ds.query(`SELECT count(*) FILTER (WHERE t::text LIKE $1)::int AS leaks FROM ${table} t`, [`%${CANARY}%`]);
          expect({ table, leaks }).toEqual({ table, leaks: 0 });
        }
        expect(logLines.filter((l) => l.includes(CANARY))).toEqual([]);
      }
    } finally {
      await app?.close();
      await ds?.destroy();
      await schema?.drop();
    }
  });

  async function post(route: string, body: unknown): Promise<Reply> {
    const res = await fetch(`${base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
  }

  /** The first `n` cases, `passing` of them answered right; every output carries the canary. */
  function outputs(n: number, passing = n): Array<{ case_id: string; output: string }> {
    return Array.from({ length: n }, (_, i) => ({ case_id: `c${String(i).padStart(3, '0')}`, output: i < passing ? 'yes' : `no ${CANARY}` }));
  }

  async function stream(runId: string): Promise<Array<{ type: string; data: any }>> {
    return ds!.query(`SELECT type, data FROM events WHERE stream_id = $1 ORDER BY stream_version`, [runStreamId(runId)]);
  }

  const runBody = (runId: string, outs: unknown[]) => ({ run_id: runId, suite_key: key, subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs: outs });

  it('outputs: [] is 422 EMPTY_RUN, and nothing is recorded for the run id', async () => {
    const r = await post('/v1/runs', runBody('empty-1', []));
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({ code: 'EMPTY_RUN', field: 'outputs' });
    expect(r.json.message).toMatch(/^the outputs list is empty: /);
    expect(await stream('empty-1')).toEqual([]);
    const [{ n }] = await ds!.query(`SELECT count(*)::int AS n FROM events WHERE stream_id LIKE $1`, [`${runStreamId('empty-1')}%`]);
    expect(n).toBe(0);
    // No outputs field at all over HTTP is the same empty list.
    const { outputs: _none, ...withoutOutputs } = runBody('empty-2', []);
    const r2 = await post('/v1/runs', withoutOutputs);
    expect(r2.status).toBe(422);
    expect(r2.json.code).toBe('EMPTY_RUN');
    expect(await stream('empty-2')).toEqual([]);
  });

  it('the same run_id with the same content twice is the same run, opened and sealed once (in any output order)', async () => {
    const outs = outputs(10, 8);
    const first = await post('/v1/runs', runBody('same-1', outs));
    expect(first.status).toBe(200);
    // The suite has 600 cases: the 590 without an output are missing (R1).
    expect(first.json.run).toMatchObject({ run_id: 'same-1', status: 'completed', scored: 600, passed: 8, missing_outputs: 590 });
    const again = await post('/v1/runs', runBody('same-1', [...outs].reverse()));
    expect(again.status).toBe(200);
    expect(again.json.run).toEqual(first.json.run);
    const events = await stream('same-1');
    expect(events.map((e) => e.type)).toEqual(['run.opened', 'run.sealed', 'run.scored', 'run.compared']);
    expect(events[0].data.request_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the same run_id with other outputs is 409 RUN_ID_CONFLICT, and the run is unchanged', async () => {
    const outs = outputs(10, 8);
    expect((await post('/v1/runs', runBody('conflict-1', outs))).status).toBe(200);
    const before = await stream('conflict-1');
    const other = outs.map((o, i) => (i === 0 ? { ...o, output: 'something else' } : o));
    const r = await post('/v1/runs', runBody('conflict-1', other));
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({ code: 'RUN_ID_CONFLICT', field: 'run_id' });
    const fewer = await post('/v1/runs', runBody('conflict-1', outs.slice(1)));
    expect(fewer.status).toBe(409);
    const subject = await post('/v1/runs', { ...runBody('conflict-1', outs), subject_id: 'someone-else' });
    expect(subject.status).toBe(409);
    expect(await stream('conflict-1')).toEqual(before);
  });

  it('a bus failure while forwarding answers 503 BUS_UNAVAILABLE with Retry-After, leaves the run open, and the same request again completes it', async () => {
    const runId = 'flaky-score-1';
    const outs = outputs(600, 590); // two work messages (500 outputs each at most)
    bus.watch = runId;
    bus.workPublishes.length = 0;
    bus.failOn('score', 2);
    const failed = await post('/v1/runs', runBody(runId, outs));
    expect(failed.status).toBe(503);
    expect(failed.json).toMatchObject({ code: 'BUS_UNAVAILABLE' });
    expect(failed.headers.get('retry-after')).toBe('2');
    expect(JSON.stringify(failed.json)).not.toContain('CANARY');
    expect((await stream(runId)).map((e) => e.type)).toEqual(['run.opened']);

    const retried = await post('/v1/runs', runBody(runId, outs));
    expect(retried.status).toBe(200);
    expect(retried.json.run).toMatchObject({ run_id: runId, status: 'completed', scored: 600, passed: 590, missing_outputs: 0 });
    const types = (await stream(runId)).map((e) => e.type);
    expect(types.filter((t) => t === 'run.opened')).toHaveLength(1);
    expect(types.filter((t) => t === 'run.sealed')).toHaveLength(1);

    // Every output was on the bus before run.sealed; the retry's ids are the first attempt's (de-duplicated).
    const score = bus.workPublishes.filter((p) => p.subject.endsWith(WORK_SUBJECTS.score));
    const seal = bus.workPublishes.filter((p) => p.subject.endsWith(WORK_SUBJECTS.seal));
    expect(score.every((p) => !p.sealedBefore)).toBe(true);
    expect(seal.length).toBeGreaterThan(0);
    expect(seal.every((p) => p.sealedBefore)).toBe(true);
    expect(score.map((p) => [p.messageId.replace(/^.*:score:/, 'score:'), p.duplicate])).toEqual([
      ['score:0', false],
      ['score:1', null], // the failed publish
      ['score:0', true], // the retry: de-duplicated by its id
      ['score:1', false],
    ]);
    expect(new Set(score.map((p) => p.messageId.replace(/:score:\d+$/, ''))).size).toBe(1);
  });

  it('a bus failure on the seal answers 503 after run.sealed; the same request again publishes the seal and completes, sealed once', async () => {
    const runId = 'flaky-seal-1';
    const outs = outputs(20, 15);
    bus.watch = runId;
    bus.workPublishes.length = 0;
    bus.failOn('seal', 1);
    const failed = await post('/v1/runs', runBody(runId, outs));
    expect(failed.status).toBe(503);
    expect(failed.json.code).toBe('BUS_UNAVAILABLE');
    expect(failed.headers.get('retry-after')).toBe('2');
    expect((await stream(runId)).map((e) => e.type)).toEqual(['run.opened', 'run.sealed']);

    const retried = await post('/v1/runs', runBody(runId, outs));
    expect(retried.status).toBe(200);
    expect(retried.json.run).toMatchObject({ run_id: runId, status: 'completed', scored: 600, passed: 15, missing_outputs: 580 });
    const types = (await stream(runId)).map((e) => e.type);
    expect(types.filter((t) => t === 'run.sealed')).toHaveLength(1);
    expect(types.filter((t) => t === 'run.opened')).toHaveLength(1);
  });
  it("issue 15: an open reads the suite version's cases once - ids, scorers, expected; no input or tags - then only the version's row", async () => {
    // An intake of its own on the app's run streams, its SQL recorded (the app's intake shares its pool with the
    // worker, which loads whole suites to score); the work it hands on is only recorded, so nothing is scored.
    const sqls: string[] = [];
    const counted = new Proxy(ds!, {
      get: (target, p, receiver) => (p === 'query' ? (sql: string, params?: unknown[]) => (sqls.push(sql), target.query(sql, params)) : Reflect.get(target, p, receiver)),
    });
    const handed: string[] = [];
    const work = { forward: async (runId: string) => void handed.push(`forward ${runId}`), seal: async (runId: string) => void handed.push(`seal ${runId}`) };
    const intake = new RunIntakeService(app.get(RunStreams), work as unknown as WorkPublisher, new SuiteRepository(), counted, { hmacSecret: 'intake-test-secret-0123456789abcdef' });
    const caseReads = () => sqls.filter((q) => /\bsuite_cases\b/.test(q));
    const open = (runId: string, outs = outputs(3, 2)) => intake.open({ ...runBody(runId, outs), project: DEFAULT_PROJECT } as never, { message_id: `m-${runId}`, correlation_id: runId });

    const first = await open('facts-1');
    expect(caseReads()).toHaveLength(1);
    expect(caseReads()[0]).not.toMatch(/\b(input|tags)\b/);
    sqls.length = 0;
    const second = await open('facts-2');
    expect(await open('facts-3', []).catch((e: { code: string }) => e.code)).toBe('EMPTY_RUN');
    expect(await open('facts-4', [{ case_id: 'nope', output: 'x' }]).catch((e: { code: string }) => e.code)).toBe('UNKNOWN_CASE');
    expect(caseReads()).toEqual([]);
    expect(sqls.filter((q) => /\bsuite_versions\b/.test(q))).toHaveLength(3);
    expect(handed).toEqual(['forward facts-1', 'seal facts-1', 'forward facts-2', 'seal facts-2']);

    // What the runs opened with is what the stored version, compiled whole, says.
    const stored = (await new SuiteRepository().find(ds!, DEFAULT_PROJECT, key))!;
    for (const { ticket } of [first, second]) {
      expect(ticket.opened).toMatchObject({ suite_key: key, suite_version: stored.version, suite_content_hash: stored.content_hash, case_count: 600 });
      expect(Object.entries(ticket.opened.scorer_versions)).toEqual(Object.entries(compileSuite(stored).scorer_versions));
      expect([...ticket.allCaseIds]).toEqual(stored.cases.map((c) => c.case_id));
    }
  });

  it("issue 28: the run-opens of one moment read their suite's head in one query, each answered as alone", async () => {
    const sqls: string[] = [];
    const counted = new Proxy(ds!, {
      get: (target, p, receiver) => (p === 'query' ? (sql: string, params?: unknown[]) => (sqls.push(sql), target.query(sql, params)) : Reflect.get(target, p, receiver)),
    });
    const work = { forward: async () => undefined, seal: async () => undefined };
    const intake = new RunIntakeService(app.get(RunStreams), work as unknown as WorkPublisher, new SuiteRepository(), counted, { hmacSecret: 'intake-test-secret-0123456789abcdef' });
    const open = (runId: string, body: object = {}) => intake.open({ ...runBody(runId, outputs(3, 2)), project: DEFAULT_PROJECT, ...body } as never, { message_id: `m-${runId}`, correlation_id: runId });
    // The version's cases are read (and cached) first, so the opens below read only heads.
    await open('heads-0');
    sqls.length = 0;
    const together = await Promise.all([
      open('heads-1'),
      open('heads-2'),
      open('heads-3'),
      open('heads-4', { suite_version: 99 }).catch((e: { code: string }) => e.code),
      open('heads-5', { suite_key: 'no-such-suite' }).catch((e: { code: string }) => e.code),
    ]);
    expect(sqls.filter((q) => /\bsuite_versions\b/.test(q) && /\bunnest\b/.test(q))).toHaveLength(1);
    // Only the refused version asks again, to tell SUITE_VERSION_NOT_FOUND from SUITE_NOT_FOUND.
    expect(sqls.filter((q) => /\bsuite_versions\b/.test(q) && !/\bunnest\b/.test(q))).toHaveLength(1);
    const stored = (await new SuiteRepository().head(ds!, DEFAULT_PROJECT, key))!;
    for (const opened of together.slice(0, 3)) expect((opened as { ticket: { opened: object } }).ticket.opened).toMatchObject({ suite_key: key, suite_version: stored.version, suite_content_hash: stored.content_hash });
    expect(together.slice(3)).toEqual(['SUITE_VERSION_NOT_FOUND', 'SUITE_NOT_FOUND']);
  });

  describe('over the bus (evals.run.requested, evals.run.sealed)', () => {
    const meta = (id: string) => ({ message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() });

    async function deadLetter(messageId: string): Promise<{ code: string; reason: string } | undefined> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const rows = await ds!.query(`SELECT code, reason FROM dead_letters WHERE message_id = $1`, [messageId]);
        if (rows.length > 0) return rows[0];
        if (Date.now() > deadline) return undefined;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('a run.requested with an empty outputs list is dead-lettered EMPTY_RUN and records nothing', async () => {
      const message = encodeMessage(SUBJECTS.RUN_REQUESTED, 1, { ...runBody('bus-empty-1', []), source: 'sandbox' } as never, meta('bus-empty-msg'));
      await bus.publish(subjectOf(bus.names, SUBJECTS.RUN_REQUESTED), serializeMessage(message), 'bus-empty-msg');
      expect(await deadLetter('bus-empty-msg')).toMatchObject({ code: 'EMPTY_RUN' });
      expect(await stream('bus-empty-1')).toEqual([]);
    });

    it('a run.sealed for a run never opened is dead-lettered UNKNOWN_RUN, as before the model', async () => {
      const message = encodeMessage(SUBJECTS.RUN_SEALED, 1, { run_id: 'bus-never-opened' } as never, meta('bus-seal-msg'));
      await bus.publish(subjectOf(bus.names, SUBJECTS.RUN_SEALED), serializeMessage(message), 'bus-seal-msg');
      const letter = await deadLetter('bus-seal-msg');
      expect(letter).toMatchObject({ code: 'UNKNOWN_RUN' });
      expect(letter!.reason).toContain('no run bus-never-opened');
      expect(await stream('bus-never-opened')).toEqual([]);
    });

    it('a run.sealed for a run that received no output is dead-lettered EMPTY_RUN; the run stays open (until it expires)', async () => {
      const opened = encodeMessage(SUBJECTS.RUN_REQUESTED, 1, { run_id: 'bus-no-output', suite_key: key, subject_kind: 'agent', subject_id: 'nobody', source: 'sandbox' } as never, meta('bus-no-output-open'));
      await bus.publish(subjectOf(bus.names, SUBJECTS.RUN_REQUESTED), serializeMessage(opened), 'bus-no-output-open');
      const sealed = encodeMessage(SUBJECTS.RUN_SEALED, 1, { run_id: 'bus-no-output' } as never, meta('bus-no-output-seal'));
      await bus.publish(subjectOf(bus.names, SUBJECTS.RUN_SEALED), serializeMessage(sealed), 'bus-no-output-seal');
      expect(await deadLetter('bus-no-output-seal')).toMatchObject({ code: 'EMPTY_RUN' });
      // No run.sealed was recorded by the refused seal (the expiry may seal it later, as `expired`).
      expect((await stream('bus-no-output')).filter((e) => e.type === 'run.sealed' && e.data.reason !== 'expired')).toEqual([]);
    });

    it('a run nobody seals expires after EVALS_RUN_TTL_SECONDS: sealed `expired`, its missing cases counted, never a baseline', async () => {
      // Opened over the bus with three outputs following; the seal never comes (a client that crashed).
      const opened = encodeMessage(SUBJECTS.RUN_REQUESTED, 1, { run_id: 'bus-expire-1', suite_key: key, subject_kind: 'agent', subject_id: 'expiring', source: 'sandbox' } as never, meta('bus-expire-open'));
      await bus.publish(subjectOf(bus.names, SUBJECTS.RUN_REQUESTED), serializeMessage(opened), 'bus-expire-open');
      for (const [i, o] of outputs(3, 2).entries()) {
        const id = `bus-expire-out-${i}`;
        const m = encodeMessage(SUBJECTS.OUTPUT_SUBMITTED, 1, { run_id: 'bus-expire-1', ...o } as never, meta(id));
        await bus.publish(subjectOf(bus.names, SUBJECTS.OUTPUT_SUBMITTED), serializeMessage(m), id);
      }
      const deadline = Date.now() + 30_000;
      let types: string[] = [];
      while (!types.includes('run.compared') && Date.now() < deadline) {
        types = (await stream('bus-expire-1')).map((e) => e.type);
        await new Promise((r) => setTimeout(r, 100));
      }
      const events = await stream('bus-expire-1');
      // The first output was recorded before it was forwarded (outputs.received), then the system sealed it.
      expect(events.map((e) => e.type)).toEqual(['run.opened', 'outputs.received', 'run.sealed', 'run.scored', 'run.compared']);
      // Issue 28: the receipt stays in the log (LOG_ONLY_RUN_EVENTS); the intake's other events are relayed.
      const relayed = await ds!.query(
        `SELECT o.subject FROM outbox o JOIN events e ON e.message_id = o.message_id WHERE e.stream_id = $1 ORDER BY o.id`,
        [runStreamId('bus-expire-1')],
      );
      expect(relayed.map((r: { subject: string }) => r.subject.replace(/^.*evals\.event\./, ''))).toEqual(['run.opened', 'run.sealed', 'run.scored', 'run.compared']);
      expect(events[2].data).toEqual({ run_id: 'bus-expire-1', reason: 'expired' });
      expect(events[3].data).toMatchObject({ n: 600, passed: 2, missing_count: 597, expired: true });
      expect(events[4].data).toMatchObject({ verdict: 'no_baseline', completeness: 'expired' });
      // Visible in the run and its EvalResult, once the read model has projected run.compared (it follows the
      // log through the bus: polled, not assumed to be there the moment the log has it).
      const view: any = await eventually(
        async () => {
          const v: any = await fetch(`${base}/v1/runs/bus-expire-1`).then((r) => r.json());
          return v.regression ? v : undefined;
        },
        15_000,
        'the read model projected run.compared of bus-expire-1',
      );
      expect(view.regression).toMatchObject({ completeness: 'expired', baseline_eligible: false, baseline_ineligible_reason: 'expired' });
      expect(view.eval_result.metrics).toMatchObject({ missing_outputs: 597, n: 600, expired: true });
      expect(view.run.expired).toBe(true);
    });
  });
});
