import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT, projectField } from '@evals/contracts';
import { SUITE_EVENTS, SuiteStreamModel, suiteCasePages, suiteStreamId, type SuitePublishedV1, type SuiteStreamState } from '@evals/domain';
import { BoundedCache } from './bounded-cache';
import { EventStore, type NewEvent } from './event-store';
import type { Sql } from './sql';
import type { SuiteCaseRecord, SuiteVersionRecord, SuiteVersionWithCases } from './suite.repository';

/** Events per statement when a version's pages are written, and per read when they are folded: each at most SUITE_PAGE_MAX_BYTES. */
const PAGES_PER_STATEMENT = 32;

/**
 * Writes a suite version's events (issue 27), in the transaction of its rows: `SuiteRepository.insertHead`
 * appends `suite.published`, each `insertCases` batch its pages, and the backfill migration both for a
 * version stored before them. Facts of the log, not relayed to the bus (`relay: false`): no app consumes
 * them there, every reader folds the stream (`loadSuite`). Ids injected for tests.
 */
export class SuiteEvents {
  constructor(
    private readonly store = new EventStore(),
    private readonly ids: () => string = randomUUID,
  ) {}

  /** The head, first in the version's stream; `created_at` is the row's, so the fold gives what the row gave. */
  async published(sql: Sql, head: SuiteVersionRecord & { readonly created_at: string }): Promise<void> {
    const project = head.project ?? DEFAULT_PROJECT;
    const data: SuitePublishedV1 = {
      // Issue 30: `default` is written as before projects, so its events read as they always did.
      ...projectField(project),
      suite_key: head.suite_key,
      version: head.version,
      content_hash: head.content_hash,
      case_count: head.case_count,
      description: head.description,
      default_scorer: head.default_scorer,
      pass_threshold: head.pass_threshold,
      regression_threshold: head.regression_threshold,
      golden_fixtures: head.golden_fixtures,
      created_at: head.created_at,
    };
    const id = this.ids();
    const metadata = { message_id: id, correlation_id: id, causation_id: id, occurred_at: head.created_at };
    await this.store.append(sql, suiteStreamId(project, head.suite_key, head.version), 0, [{ type: SUITE_EVENTS.published, version: 1, data, metadata }], { relay: false });
  }

  /**
   * The pages of `cases`, the first at ordinal `from`, after what the stream holds: a streamed push calls
   * this once per slice, so only that slice is in memory. Each page is correlated with its version's head.
   */
  async pages(sql: Sql, project: string, suiteKey: string, version: number, cases: readonly SuiteCaseRecord[], from: number): Promise<void> {
    if (cases.length === 0) return;
    const streamId = suiteStreamId(project, suiteKey, version);
    const [at] = await sql.query(
      `SELECT coalesce(max(stream_version), 0)::int AS last,
              max(metadata->>'message_id') FILTER (WHERE stream_version = 1) AS head_id,
              max(metadata->>'occurred_at') FILTER (WHERE stream_version = 1) AS occurred_at
       FROM events WHERE stream_id = $1`,
      [streamId],
    );
    if (at.head_id === null) throw new Error(`suite ${suiteKey} v${version}: cases written before the version's suite.published`);
    const events: NewEvent[] = suiteCasePages(suiteKey, version, cases, from).map((data) => ({
      type: SUITE_EVENTS.casesPublished,
      version: 1,
      data,
      metadata: { message_id: this.ids(), correlation_id: at.head_id, causation_id: at.head_id, occurred_at: at.occurred_at },
    }));
    for (let i = 0; i < events.length; i += PAGES_PER_STATEMENT) {
      await this.store.append(sql, streamId, at.last + i, events.slice(i, i + PAGES_PER_STATEMENT), { relay: false });
    }
  }
}

/** The latest version of a suite key of a project in the log, or null (a partial index on `suite.published` finds it). */
export async function latestSuiteVersion(sql: Sql, project: string, suiteKey: string): Promise<number | null> {
  const rows = await sql.query(
    `SELECT (data->>'version')::int AS version FROM events
     WHERE type = 'suite.published' AND data->>'suite_key' = $1 AND coalesce(data->>'project', '${DEFAULT_PROJECT}') = $2
     ORDER BY (data->>'version')::int DESC LIMIT 1`,
    [suiteKey, project],
  );
  return rows.length === 0 ? null : rows[0].version;
}

/**
 * A suite version folded from its stream through the suite stream model (issue 27): what
 * `SuiteRepository.find` gave from the ingestion's tables, so `compileSuite` takes it unchanged. The latest
 * version when `version` is undefined; null when there is no such version. Read a few pages at a time; a
 * stream that does not fold (a page missing, repeated, invalid) throws SuiteStreamError with its code.
 */
export async function loadSuite(sql: Sql, store: EventStore, project: string, suiteKey: string, version?: number): Promise<SuiteVersionWithCases | null> {
  const v = version ?? (await latestSuiteVersion(sql, project, suiteKey));
  if (v === null) return null;
  const streamId = suiteStreamId(project, suiteKey, v);
  let state: SuiteStreamState = SuiteStreamModel.initialSuiteState;
  let after = 0;
  for (;;) {
    const page = await store.readStreamPage(sql, streamId, after, PAGES_PER_STATEMENT);
    for (const event of page) state = SuiteStreamModel.evolveRaw(state, event);
    if (page.length > 0) after = page[page.length - 1].stream_version;
    if (page.length < PAGES_PER_STATEMENT) break;
  }
  return after === 0 ? null : SuiteStreamModel.finish(state);
}

/** Folded cases the SuiteVersions cache holds at most: with their inputs, so fewer than the worker's compiled ones. */
export const SUITE_VERSIONS_CACHE_CASES = 100_000;

/**
 * The suite versions an app folds from the log, cached in memory (a version never changes, V2), bounded by
 * cases: the regression app's calibration and comparisons and the read model's judge correction read the
 * same versions again and again. `cacheCases: 0` caches nothing (the worker caches the compiled suite itself).
 */
export class SuiteVersions {
  private readonly cache: BoundedCache<string, SuiteVersionWithCases> | null;

  constructor(
    private readonly store = new EventStore(),
    cacheCases = SUITE_VERSIONS_CACHE_CASES,
  ) {
    this.cache = cacheCases > 0 ? new BoundedCache(cacheCases, (suite) => Math.max(1, suite.cases.length)) : null;
  }

  /** The version (the latest when `version` is undefined), or null when the log has none. */
  async find(sql: Sql, project: string, suiteKey: string, version?: number): Promise<SuiteVersionWithCases | null> {
    const v = version ?? (await latestSuiteVersion(sql, project, suiteKey));
    if (v === null) return null;
    const key = suiteStreamId(project, suiteKey, v);
    const cached = this.cache?.get(key);
    if (cached) return cached;
    const suite = await loadSuite(sql, this.store, project, suiteKey, v);
    if (suite) this.cache?.set(key, suite);
    return suite;
  }
}
