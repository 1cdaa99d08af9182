/**
 * What the upgrade fixture (test/upgrade/upgrade-fixture.ts) and the upgrade test
 * (test/e2e/upgrade.e2e-spec.ts) share: the fixture's shape, the judge it was made with, and the fields of
 * an answer that may differ between two askings of the same database (docs/testing.md, "The upgrade test").
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCsv } from '../../apps/cli/src/import/csv';
import type { AppName } from '../support/app-processes';

/** The judge pin the fixture's runs and calibration used; the test configures the same one, so the views name the same configured judge. */
export const UPGRADE_JUDGE = { model: 'gpt-4o-2024-08-06', rubric: 'The reply resolves the request politely.' } as const;

/** The apps' configuration when the fixture was made and when the test reads it: the same judge pin and prices, the same monitor. */
export function upgradeEnv(judgeBaseUrl: string, judgeCachePrefix: string): Record<string, string> {
  return {
    JUDGE_PROVIDER: 'openai',
    JUDGE_MODEL: UPGRADE_JUDGE.model,
    JUDGE_BASE_URL: judgeBaseUrl,
    JUDGE_API_KEY: 'fixture',
    JUDGE_INPUT_USD_PER_MTOK: '2.5',
    JUDGE_OUTPUT_USD_PER_MTOK: '10',
    JUDGE_MAX_RETRIES: '0',
    JUDGE_CACHE_PREFIX: judgeCachePrefix,
    EVALS_MONITOR_SUITES: 'guard',
    EVALS_MONITOR_WINDOW_SECONDS: '4',
    EVALS_MONITOR_GRACE_SECONDS: '1',
  };
}

export interface CapturedView {
  readonly app: AppName;
  /** GET route with its query string. */
  readonly route: string;
  readonly status: number;
  /** The answer's media type, without parameters: application/json, text/csv, text/event-stream. */
  readonly type: string;
  readonly json?: unknown;
  readonly text?: string;
}

export interface UpgradeFixture {
  /** The commit of the release that wrote the database. */
  readonly release: string;
  /** The schema the dump names (rewritten by the test to its own). */
  readonly schema: string;
  /** Every table's rows in the dump. */
  readonly rows: Record<string, number>;
  readonly views: CapturedView[];
}

/**
 * Fields computed at the time of asking, not stored: the only ones whose values the comparison ignores
 * (their presence still counts). Keep it tiny; each has its reason.
 */
export const VOLATILE_FIELDS: Readonly<Record<string, string>> = {
  // GET /v1/budgets: "the time the windows were computed at" - now.
  as_of: 'the moment the budgets were read (GET /v1/budgets)',
};

/** `value` with every volatile field's value replaced by a marker, at any depth. */
export function withoutVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVolatile);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k in VOLATILE_FIELDS ? '<volatile>' : withoutVolatile(v)]));
}

export const UPGRADE_FIXTURES = path.resolve(__dirname, '../fixtures/upgrade');

/** A release's dump, on `schema` instead of the fixture's; the schema itself is not created (the caller's, or `public`). */
export function restoreSql(fixture: UpgradeFixture, schema: string): string {
  const sql = fs.readFileSync(path.join(UPGRADE_FIXTURES, `${fixture.release}.sql`), 'utf8');
  return sql.replace(new RegExp(`^CREATE SCHEMA ${fixture.schema};$`, 'm'), '').replace(new RegExp(`\\b${fixture.schema}\\b`, 'g'), schema);
}

/** A response's media type without its parameters (`text/csv; charset=utf-8` -> `text/csv`). */
export function mediaType(res: Response): string {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
}

/**
 * An answer as values to compare: JSON as it is; a CSV as one record per row, by column name; an SSE replay
 * as its frames, each event with its parsed data. So a release that adds a field or a column still compares,
 * and one that drops or changes any does not.
 */
export function comparable(view: Pick<CapturedView, 'type' | 'json' | 'text'>): unknown {
  if (view.json !== undefined) return withoutVolatile(view.json);
  const text = view.text ?? '';
  if (view.type === 'text/csv') {
    return parseCsv(text, view.type).map((row) => row.values);
  }
  if (view.type === 'text/event-stream') {
    return text
      .split('\n\n')
      .filter((frame) => frame.trim() !== '')
      .map((frame) => {
        const lines = frame.split('\n');
        const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? null;
        const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        return { event, data: withoutVolatile(JSON.parse(data)) };
      });
  }
  return text;
}
