import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { migrate, migrations } from './data-source';
import { EventStore, StreamVersionConflict, toWire, type NewEvent } from './event-store';
import { allMigrationsApplied } from './migration-state';
import { OutboxRelay } from './outbox-relay';
import { RegressionRepository, type RunVerdictRow } from './regression.repository';

/**
 * What the persistence adapter must do on any PostgreSQL it is given (docs/embedded.md, "The same tests on
 * both"): the real server (persistence.postgres.int-spec.ts) and PGlite, the embedded default
 * (persistence.pglite.int-spec.ts). `open` hands over a fresh, empty database (or schema) and its teardown.
 */
export function persistenceContract(label: string, open: () => Promise<{ ds: DataSource; teardown(): Promise<void> }>): void {
  describe(`contract: persistence (${label})`, () => {
    let ds: DataSource;
    let teardown: () => Promise<void>;
    const store = new EventStore();

    beforeAll(async () => {
      ({ ds, teardown } = await open());
      expect(await migrate(ds)).toEqual(migrations.map((m) => m.name));
    }, 120_000);

    afterAll(async () => {
      await teardown?.();
    });

    it('a second migrate applies nothing', async () => {
      expect(await migrate(ds)).toEqual([]);
    });

    it('an up-to-date schema is recognised by one query; a migration it lacks, or no migrations table, is not (issue 15)', async () => {
      const names = migrations.map((m) => new m().name);
      expect(await allMigrationsApplied(ds, 'schema_migrations', names)).toBe(true);
      expect(await allMigrationsApplied(ds, 'schema_migrations', [...names, 'Later9999999999999'])).toBe(false);
      expect(await allMigrationsApplied(ds, 'no_such_migrations', names)).toBe(false);
    });

    describe('append-only tables refuse UPDATE, DELETE and TRUNCATE in the database itself (V2, R3)', () => {
      beforeAll(async () => {
        await ds.query(`INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
          VALUES ('ao-run', 1, 'evals.run.opened', 1, '{}', '{}', gen_random_uuid())`);
        await ds.query(`INSERT INTO suite_versions (suite_key, version, content_hash, default_scorer, pass_threshold,
          regression_threshold, case_count) VALUES ('ao-suite', 1, 'h', '{"type":"exact"}', 0.8, 0.05, 1)`);
        await ds.query(`INSERT INTO suite_cases (suite_key, suite_version, ordinal, case_id, expected) VALUES ('ao-suite', 1, 0, 'c1', '"x"')`);
        await ds.query(`INSERT INTO evidence (run_id, case_id, scorer, scorer_version, score, passed, label, scored_at)
          VALUES ('ao-run', 'c1', 'exact', '1.0.0', 1, true, 'match', now())`);
        await ds.query(`INSERT INTO dead_letters (subject, code, reason) VALUES ('evals.run.sealed', 'MALFORMED_JSON', 'r')`);
      });

      const cases: Array<[string, string, string]> = [
        ['events', `UPDATE events SET type = 'x' WHERE stream_id = 'ao-run'`, `DELETE FROM events WHERE stream_id = 'ao-run'`],
        ['suite_versions', `UPDATE suite_versions SET pass_threshold = 0`, `DELETE FROM suite_versions`],
        ['suite_cases', `UPDATE suite_cases SET expected = '"y"'`, `DELETE FROM suite_cases`],
        ['evidence', `UPDATE evidence SET passed = false`, `DELETE FROM evidence`],
        ['dead_letters', `UPDATE dead_letters SET reason = 'x'`, `DELETE FROM dead_letters`],
      ];

      it.each(cases)('%s', async (table, update, del) => {
        const [{ n: before }] = await ds.query(`SELECT count(*)::int AS n FROM ${table}`);
        await expect(ds.query(update)).rejects.toThrow(new RegExp(`table ${table} is append-only: UPDATE refused`));
        await expect(ds.query(del)).rejects.toThrow(new RegExp(`table ${table} is append-only: DELETE refused`));
        await expect(ds.query(`TRUNCATE ${table} CASCADE`)).rejects.toThrow(/append-only: TRUNCATE refused/);
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ${table}`);
        expect(n).toBe(before);
        expect(n).toBeGreaterThan(0);
      });

      it('a duplicate (run, case) evidence row is refused by the primary key', async () => {
        await expect(
          ds.query(`INSERT INTO evidence (run_id, case_id, scorer, scorer_version, score, passed, label, scored_at)
            VALUES ('ao-run', 'c1', 'exact', '1.0.0', 0, false, 'mismatch', now())`),
        ).rejects.toThrow(/duplicate key/);
      });
    });

    describe('event store and transactional outbox', () => {
      it('appends with stream versions and global positions, and writes one outbox row per event', async () => {
        const stored = await ds.transaction((m) => store.append(m, 'run-a', 0, [event('run.opened'), event('run.sealed')]));
        expect(stored.map((e) => e.stream_version)).toEqual([1, 2]);
        expect(stored[1].position).toBeGreaterThan(stored[0].position);
        const outbox = await ds.query(`SELECT subject, payload FROM outbox WHERE message_id = ANY($1::uuid[]) ORDER BY id`, [stored.map((e) => e.metadata.message_id)]);
        expect(outbox.map((r: { subject: string }) => r.subject)).toEqual(['evals.event.run.opened', 'evals.event.run.sealed']);
        expect(outbox[0].payload).toMatchObject({ schema: 'run.opened.v1', stream_id: 'run-a', stream_version: 1, position: stored[0].position });
        // Built in SQL in the append's one statement (issue 28), exactly the wire form `toWire` gives.
        expect(outbox.map((r: { payload: unknown }) => r.payload)).toEqual(stored.map(toWire));
        expect((await store.readStream(ds, 'run-a')).map((e) => e.type)).toEqual(['run.opened', 'run.sealed']);
      });

      it('refuses a writer whose expected version is stale (optimistic concurrency), and rolls back its outbox rows', async () => {
        await store.append(ds, 'run-b', 0, [event('run.opened')]);
        const late = event('run.sealed');
        await expect(ds.transaction((m) => store.append(m, 'run-b', 0, [late]))).rejects.toBeInstanceOf(StreamVersionConflict);
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = $1`, [late.metadata.message_id]);
        expect(n).toBe(0);
      });

      it('of four concurrent writers at the same version exactly one wins', async () => {
        await store.append(ds, 'run-c', 0, [event('run.opened')]);
        const results = await Promise.allSettled(Array.from({ length: 4 }, () => ds.transaction((m) => store.append(m, 'run-c', 1, [event('run.sealed')]))));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof StreamVersionConflict)).toBe(true);
        expect((await store.readStream(ds, 'run-c')).length).toBe(2);
      });

      it('issue 28: appendMany writes several streams in one statement, each at its own version, with their outbox rows; readStreams reads them back', async () => {
        await store.append(ds, 'many-a', 0, [event('run.opened')]);
        const [a, b] = await ds.transaction((m) =>
          store.appendMany(m, [
            { streamId: 'many-a', expectedVersion: 1, events: [event('run.sealed'), event('run.scored')] },
            { streamId: 'many-b', expectedVersion: 0, events: [event('cases.scored')] },
            { streamId: 'many-c', expectedVersion: 0, events: [] },
          ]),
        );
        expect(a.map((e) => [e.stream_id, e.stream_version, e.type])).toEqual([
          ['many-a', 2, 'run.sealed'],
          ['many-a', 3, 'run.scored'],
        ]);
        expect(b.map((e) => [e.stream_id, e.stream_version])).toEqual([['many-b', 1]]);
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = ANY($1::uuid[])`, [[...a, ...b].map((e) => e.metadata.message_id)]);
        expect(n).toBe(3);
        const streams = await store.readStreams(ds, ['many-b', 'many-a', 'many-none']);
        expect(streams.get('many-a')!.map((e) => e.stream_version)).toEqual([1, 2, 3]);
        expect(streams.get('many-b')!.map((e) => e.type)).toEqual(['cases.scored']);
        expect(streams.has('many-none')).toBe(false);
      });

      it('issue 28: the log-only types of an append are written to the log with no outbox row; the others of the same statement are relayed', async () => {
        const logOnly = new Set(['outputs.received']);
        const [a, b] = await store.appendMany(
          ds,
          [
            { streamId: 'log-only-a', expectedVersion: 0, events: [event('run.opened'), event('outputs.received'), event('run.sealed')] },
            { streamId: 'log-only-b', expectedVersion: 0, events: [event('outputs.received')] },
          ],
          { logOnly },
        );
        const ids = [...a, ...b].map((e) => e.metadata.message_id);
        const outbox = await ds.query(`SELECT subject FROM outbox WHERE message_id = ANY($1::uuid[]) ORDER BY id`, [ids]);
        expect(outbox.map((r: { subject: string }) => r.subject)).toEqual(['evals.event.run.opened', 'evals.event.run.sealed']);
        // The log keeps every event, in its place in the stream.
        expect((await store.readStream(ds, 'log-only-a')).map((e) => [e.stream_version, e.type])).toEqual([
          [1, 'run.opened'],
          [2, 'outputs.received'],
          [3, 'run.sealed'],
        ]);
        expect((await store.readStream(ds, 'log-only-b')).map((e) => e.type)).toEqual(['outputs.received']);
        // With relay: false nothing is relayed, log-only types or not (one parameter fewer in the statement).
        const [c] = await store.appendMany(ds, [{ streamId: 'log-only-c', expectedVersion: 0, events: [event('run.opened'), event('outputs.received')] }], { relay: false, logOnly });
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = ANY($1::uuid[])`, [c.map((e) => e.metadata.message_id)]);
        expect(n).toBe(0);
      });

      it('issue 28: an append is one statement, atomic without a transaction: a conflict leaves neither events nor outbox rows', async () => {
        const statements: string[] = [];
        const counting = new Proxy(ds, {
          get: (target, key) =>
            key === 'query' ? (text: string, parameters?: unknown[]) => (statements.push(text), target.query(text, parameters)) : Reflect.get(target, key),
        });
        const [stored] = await store.appendMany(counting, [{ streamId: 'one-stmt', expectedVersion: 0, events: [event('run.opened'), event('run.sealed')] }]);
        expect(statements).toHaveLength(1);
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = ANY($1::uuid[])`, [stored.map((e) => e.metadata.message_id)]);
        expect(n).toBe(2);
        const late = [event('run.scored'), event('run.compared')];
        await expect(store.appendMany(ds, [{ streamId: 'one-stmt-b', expectedVersion: 0, events: [late[0]] }, { streamId: 'one-stmt', expectedVersion: 1, events: [late[1]] }])).rejects.toBeInstanceOf(StreamVersionConflict);
        expect(await store.readStream(ds, 'one-stmt-b')).toEqual([]);
        const [{ left }] = await ds.query(`SELECT count(*)::int AS left FROM outbox WHERE message_id = ANY($1::uuid[])`, [late.map((e) => e.metadata.message_id)]);
        expect(left).toBe(0);
      });

      it('issue 28: a stale version in one stream of appendMany names that stream and writes nothing of any', async () => {
        await store.append(ds, 'many-d', 0, [event('run.opened')]);
        await store.append(ds, 'many-e', 0, [event('run.opened')]);
        const fresh = event('run.sealed');
        const error = await ds
          .transaction((m) =>
            store.appendMany(m, [
              { streamId: 'many-d', expectedVersion: 1, events: [fresh] },
              { streamId: 'many-e', expectedVersion: 0, events: [event('run.sealed')] },
            ]),
          )
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StreamVersionConflict);
        expect((error as StreamVersionConflict).streamId).toBe('many-e');
        expect((await store.readStream(ds, 'many-d')).length).toBe(1);
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = $1`, [fresh.metadata.message_id]);
        expect(n).toBe(0);
      });

      it('the relay publishes every unpublished row once with its message id, and keeps the rows while the bus refuses them (G6)', async () => {
        await store.append(ds, 'run-d', 0, [event('run.opened')]);
        let up = false;
        const sent: Array<{ subject: string; id: string }> = [];
        const relay = new OutboxRelay(ds, {
          publish: async (subject: string, _payload: Uint8Array | string, id: string) => {
            if (!up) throw new Error('bus down');
            sent.push({ subject, id });
            return { seq: sent.length, duplicate: false };
          },
        });
        await expect(relay.tick()).rejects.toThrow('bus down');
        const [{ n: waiting }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
        expect(waiting).toBeGreaterThan(0);
        up = true;
        while ((await relay.tick()) > 0);
        expect(sent).toHaveLength(waiting);
        expect(new Set(sent.map((s) => s.id)).size).toBe(waiting);
        expect(await relay.tick()).toBe(0);
        const [{ n: left }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
        expect(left).toBe(0);
      });
    });

    it('isolation: a transaction that rolls back while another commits takes nothing of the committed one with it', async () => {
      await ds.query(`CREATE TABLE IF NOT EXISTS contract_isolation (v text)`);
      const committed = ds.transaction(async (m) => {
        await m.query(`INSERT INTO contract_isolation VALUES ('committed')`);
        // Hold the transaction open while the other one runs and fails.
        await new Promise((r) => setTimeout(r, 50));
      });
      const rolledBack = ds
        .transaction(async (m) => {
          await m.query(`INSERT INTO contract_isolation VALUES ('rolled-back')`);
          throw new Error('roll back');
        })
        .then(
          () => 'committed?',
          () => 'rolled back',
        );
      const [, outcome] = await Promise.all([committed, rolledBack]);
      expect(outcome).toBe('rolled back');
      expect((await ds.query(`SELECT v FROM contract_isolation ORDER BY v`)).map((r: { v: string }) => r.v)).toEqual(['committed']);
    });

    describe("a regression micro-batch's reads and writes, one statement each (issue 28)", () => {
      const repo = new RegressionRepository();
      const verdict = (run_id: string, minute: number, over: Partial<RunVerdictRow> = {}): RunVerdictRow => ({
        project: 'default', run_id, suite_key: 's', suite_version: 1, subject_kind: 'agent', subject_id: 'bot', variant: null,
        completed_at: `2026-11-30T00:${String(minute).padStart(2, '0')}:00.000Z`, n: 10, passed: 9, score: 0.9, pass_threshold: 0.5,
        scorer_versions: { exact: '1.0.0' }, verdict: 'no_regression', completeness: 'complete', baseline_run_id: null, baseline_choice: null, comparison: null, ...over,
      });

      it('recordMany inserts every new row (nulls and JSON included) and names them; a row recorded already is left out', async () => {
        await repo.record(ds, verdict('m-0', 0));
        const inserted = await repo.recordMany(ds, [verdict('m-1', 1, { comparison: { x: 1 }, baseline_run_id: 'm-0', baseline_choice: 'automatic' }), verdict('m-0', 0), verdict('m-2', 2, { variant: 'v', project: 'team-a' })]);
        expect([...inserted].sort()).toEqual(['m-1', 'm-2']);
        expect(await repo.find(ds, 'default', 'm-1')).toEqual(verdict('m-1', 1, { comparison: { x: 1 }, baseline_run_id: 'm-0', baseline_choice: 'automatic' }));
        expect(await repo.find(ds, 'team-a', 'm-2')).toEqual(verdict('m-2', 2, { variant: 'v', project: 'team-a' }));
      });

      it('candidates reads rows of any project by run id; histories is history of each key, in the keys\' order', async () => {
        const { comparison: _, ...m1 } = verdict('m-1', 1, { baseline_run_id: 'm-0', baseline_choice: 'automatic' });
        expect((await repo.candidates(ds, ['m-1', 'm-2', 'none'])).sort((a, b) => a.run_id.localeCompare(b.run_id))).toEqual([m1, expect.objectContaining({ run_id: 'm-2', project: 'team-a' })]);
        await repo.recordMany(ds, [verdict('m-3', 1), verdict('m-4', 3, { subject_id: 'other' })]);
        const keys = [
          { project: 'team-a', suite_key: 's', subject_kind: 'agent', subject_id: 'bot' },
          { project: 'default', suite_key: 's', subject_kind: 'agent', subject_id: 'none' },
          { project: 'default', suite_key: 's', subject_kind: 'agent', subject_id: 'bot' },
        ];
        const pages = await repo.histories(ds, keys, 2);
        expect(pages.map((p) => p.map((r) => r.run_id))).toEqual([['m-2'], [], ['m-3', 'm-1']]);
        expect(pages[2]).toEqual(await repo.history(ds, 'default', 's', 'agent', 'bot', 2));
      });

      it('pinsFor reads each key\'s pin with its pinned run\'s row within the project (null when it has none there)', async () => {
        await repo.pin(ds, 'default', { suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: null, run_id: 'm-1' });
        await repo.pin(ds, 'default', { suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: 'v', run_id: 'm-2' });
        const pins = await repo.pinsFor(ds, [
          { project: 'default', suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: null },
          { project: 'default', suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: 'v' },
          { project: 'team-a', suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: null },
        ]);
        const { comparison: _, ...m1 } = verdict('m-1', 1, { baseline_run_id: 'm-0', baseline_choice: 'automatic' });
        expect(pins.sort((a, b) => String(a.variant).localeCompare(String(b.variant)))).toEqual([
          { project: 'default', suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: null, run_id: 'm-1', pinned: m1 },
          // m-2 is team-a's run: not a row of this pin's project.
          { project: 'default', suite_key: 's', subject_kind: 'agent', subject_id: 'bot', variant: 'v', run_id: 'm-2', pinned: null },
        ]);
      });

      it('addFindings inserts many findings in one statement', async () => {
        const f = (run_id: string, project: string) => ({ project, finding_id: randomUUID(), kind: 'eval_regression', run_id, payload: { run_id }, occurred_at: '2026-11-30T00:00:00.000Z' });
        await repo.addFindings(ds, [f('m-1', 'default'), f('m-2', 'team-a')]);
        expect(await repo.findingFor(ds, 'team-a', 'm-2')).toMatchObject({ payload: { run_id: 'm-2' } });
        expect(await repo.findingFor(ds, 'default', 'm-1')).toMatchObject({ payload: { run_id: 'm-1' } });
      });
    });

    it('run locks: a transaction-scoped advisory lock is released at commit', async () => {
      const key = 7_700_001;
      await ds.transaction(async (m) => {
        await m.query('SELECT pg_advisory_xact_lock($1)', [key]);
      });
      const [{ free }] = await ds.query('SELECT pg_try_advisory_lock($1) AS free', [key]);
      expect(free).toBe(true);
      await ds.query('SELECT pg_advisory_unlock($1)', [key]);
    });
  });
}

function event(type: string, data: object = {}): NewEvent {
  const id = randomUUID();
  return { type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: '2026-11-30T00:00:00.000Z' } };
}
