import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as net from 'node:net';
import { uniqueSuffix } from '../support/isolation';
import { OpenApiConformance } from '../support/openapi-conformance';
import { untilProjected } from '../support/read-model';
import { runHistoryContract } from './run-history.contract';

/**
 * The HTTP API contract (issue 7): ONE suite of request/response assertions, run against the four apps on
 * real servers (http-contract.servers.e2e-spec.ts) and against `evals serve` on the embedded adapters
 * (http-contract.embedded.e2e-spec.ts). Shapes and codes come from the controllers and docs/contracts.md,
 * suites.md, gate.md, scorecards.md, read-model.md. A test that passes on one target and fails on the other
 * is drift between the deployments, never a reason to loosen the assertion.
 */
export type ContractApp = 'ingestion' | 'read' | 'regression';

/**
 * Configuration every target must be started with: a 1 MB body limit, so the over-the-limit refusal is
 * tested with a small body (the 512 KiB output limit of the contract still fits under it).
 */
export const CONTRACT_ENV: Readonly<Record<string, string>> = { HTTP_BODY_LIMIT_MB: '1' };

export interface ContractTarget {
  url(app: ContractApp, path: string): string;
  stop(): Promise<void>;
}

interface Reply {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

/**
 * Text that only an internal failure puts in an answer: an engine or driver error's message, a class name of
 * an error, a stack frame, a file path. No answer of the contract may contain any (issue 16).
 */
const INTERNAL_ERROR_TEXT =
  /Maximum call stack|RangeError|TypeError|ReferenceError|SyntaxError|QueryFailedError|invalid byte sequence|unsupported Unicode escape|violates .* constraint|duplicate key value|ECONNREFUSED|node_modules|\bat [\w.<>]+ \(|\.ts:\d+|\.js:\d+|Cannot read properties/;

/** Validates OpenAPI documents with the project's validator (an ES module, so in its own process). */
function validateOpenApi(docs: unknown[]): Promise<{ ok: boolean; problems: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-openapi-'));
  const files = docs.map((doc, i) => {
    const file = path.join(dir, `openapi-${i}.json`);
    fs.writeFileSync(file, JSON.stringify(doc));
    return file;
  });
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-r', '@swc-node/register', 'apps/cli/src/api/openapi.script.ts', '--validate', ...files], { cwd: path.resolve(__dirname, '../..'), timeout: 60_000 }, (error, stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true });
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
      } catch {
        reject(new Error(`openapi --validate failed: ${String(error)} ${stderr.slice(-1000)}`));
      }
    });
  });
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const Z_95 = 1.959963984540054;
/** The 95% Wilson score interval (docs/statistics.md), computed here independently of libs/stats. */
function wilson(passed: number, n: number): { lower: number; upper: number } {
  const p = passed / n;
  const z2 = Z_95 * Z_95;
  const centre = p + z2 / (2 * n);
  const half = Z_95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const d = 1 + z2 / n;
  return { lower: (centre - half) / d, upper: (centre + half) / d };
}

/**
 * The CSV columns as docs/scorecards.md documents them, read from its "Fields" table (a cell `same` repeats
 * the JSON fields), so the test holds the service to the page rather than to a copy of the code's list.
 */
const SCORECARD_CSV_COLUMNS_DOCUMENTED: string[] = (() => {
  const page = fs.readFileSync(path.resolve(__dirname, '../../docs/scorecards.md'), 'utf8');
  const table = page.slice(page.indexOf('| JSON field | CSV column(s) |'));
  const lines = table.split('\n').slice(2);
  const rows = lines.slice(0, lines.findIndex((line) => !line.startsWith('|')));
  return rows.flatMap((row) => {
    const [json, csv] = row.split(' | ');
    return [...((csv!.trim() === 'same' ? json! : csv!).matchAll(/`([a-z_]+)`/g))].map((m) => m[1]!);
  });
})();

export function httpApiContract(label: string, start: () => Promise<ContractTarget>): void {
  describe(`HTTP API contract: ${label}`, () => {
    let target: ContractTarget | undefined;
    const sfx = uniqueSuffix();
    // Every answer of the suite, for the final scan for internal error text.
    const answers: Array<{ at: string; status: number; text: string }> = [];
    const CANARY = `CANARY-OUTPUT-${sfx}-do-not-echo`;

    beforeAll(async () => {
      target = await start();
    }, 120_000);

    afterAll(async () => {
      await target?.stop();
    }, 60_000);

    async function call(app: ContractApp, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
      const init: RequestInit = { method };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        init.headers = { 'content-type': contentType };
      }
      const res = await fetch(target!.url(app, path), init);
      const text = await res.text();
      let json: any = undefined;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      answers.push({ at: `${method} ${path.split('?')[0]}`, status: res.status, text });
      return { status: res.status, text, json, headers: res.headers };
    }
    const get = (app: ContractApp, path: string) => call(app, 'GET', path);
    const post = (app: ContractApp, path: string, body: unknown, contentType?: string) => call(app, 'POST', path, body, contentType);

    function expectStatus(reply: Reply, status: number): void {
      if (reply.status !== status) throw new Error(`expected HTTP ${status}, got ${reply.status}: ${reply.text.slice(0, 2000)}`);
    }

    /** A suite of `n` exact-match cases `c0..c{n-1}` whose expected output is `yes`. */
    function exactSuite(key: string, n: number, over: Record<string, unknown> = {}): Record<string, unknown> {
      return {
        key,
        default_scorer: { type: 'exact' },
        pass_threshold: 0.5,
        regression_threshold: 0.1,
        cases: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, input: `question ${i}`, expected: 'yes' })),
        ...over,
      };
    }

    async function pushSuite(suite: Record<string, unknown>): Promise<number> {
      const r = await post('ingestion', '/v1/suites', suite);
      expectStatus(r, 201);
      return r.json.suite.version;
    }

    /** `passing` of the first `n` cases answered `yes`, the rest `no`. */
    const outputs = (n: number, passing: number) => Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' }));

    /** A synchronous run (R5); the read model's view of it is waited for, so what follows may read it there. */
    async function run(body: Record<string, unknown>): Promise<any> {
      const r = await post('ingestion', '/v1/runs', { subject_kind: 'agent', ...body });
      expectStatus(r, 200);
      await untilProjected(async () => {
        const v = await get('read', `/v1/runs/${encodeURIComponent(r.json.run.run_id)}`);
        return v.status === 200 ? v.json : null;
      }, `run ${r.json.run.run_id}`);
      return r.json;
    }

    describe('service surface', () => {
      it.each(['ingestion', 'read', 'regression'] as const)('GET /health on the %s URL: 200, status ok, database and bus up', async (app) => {
        const r = await get(app, '/health');
        expectStatus(r, 200);
        expect(r.json).toMatchObject({ status: 'ok', checks: { database: 'up', bus: 'up' } });
      });

      it('GET /openapi.json on the ingestion, read and regression URLs: valid OpenAPI 3 documents of their routes, each described (X1)', async () => {
        const routes = {
          ingestion: ['/v1/suites', '/v1/suites/{key}', '/v1/suites/{key}/versions/{version}', '/v1/runs', '/v1/gate', '/v1/gate/{id}', '/v1/gate/{id}/override'],
          read: ['/v1/runs/{id}', '/v1/runs/{id}/events', '/v1/scorecards'],
          regression: ['/v1/baselines', '/v1/findings', '/v1/findings/{id}', '/v1/comparisons', '/v1/comparisons/{id}', '/v1/calibration-sets', '/v1/calibrations', '/v1/judges/status'],
        } as const;
        // The document the repository carries (docs/openapi.json, `evals serve`'s) describes the same operations.
        const committed = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../docs/openapi.json'), 'utf8'));
        const docs: unknown[] = [];
        for (const app of ['ingestion', 'read', 'regression'] as const) {
          const r = await get(app, '/openapi.json');
          expectStatus(r, 200);
          expect(r.json.openapi).toMatch(/^3\./);
          expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(['/health', ...routes[app]]));
          expect(r.json.info.title).not.toMatch(/evals evals/);
          for (const route of routes[app]) expect([route, r.json.paths[route]]).toEqual([route, committed.paths[route]]);
          docs.push(r.json);
        }
        expect(await validateOpenApi(docs)).toEqual({ ok: true, problems: [] });
      }, 60_000);

      it('GET /openapi.json and /docs answer without a key (public by decision, docs/security.md)', async () => {
        for (const app of ['ingestion', 'read', 'regression'] as const) {
          const res = await fetch(target!.url(app, '/docs'));
          expect(res.status).toBe(200);
          expect(await res.text()).toMatch(/swagger/i);
        }
      });

      // Node's parser refuses these before any route. Its own refusal destroyed the socket while the client was
      // still sending the body, and about one such request in five got a reset instead of its answer.
      it.each(['ingestion', 'read', 'regression'] as const)(
        'a request line over 16 KiB with a 1 MB body still being sent, on the %s URL: 431 HEADERS_TOO_LARGE, 20 times in 20, never a reset',
        async (app) => {
          const outcomes: string[] = [];
          for (let i = 0; i < 20; i++) {
            try {
              const res = await fetch(target!.url(app, `/v1/suites?q=${'a'.repeat(70_000)}`), {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: Buffer.alloc(1024 * 1024 + 10, 0x20),
              });
              outcomes.push(`${res.status} ${((await res.json()) as { code?: string }).code}`);
            } catch (error) {
              outcomes.push(`no answer: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`);
            }
          }
          expect(outcomes).toEqual(Array(20).fill('431 HEADERS_TOO_LARGE'));
          expectStatus(await get(app, '/health'), 200);
        },
        60_000,
      );

      it('bytes that are not an HTTP request: 400 MALFORMED_REQUEST in the JSON error shape, and the connection closed', async () => {
        const { hostname, port } = new URL(target!.url('ingestion', '/'));
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = net.connect(Number(port), hostname, () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'));
          let text = '';
          socket.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve(text)).on('error', reject);
        });
        expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
        expect(raw).toMatch(/\r\nConnection: close\r\n/);
        expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ code: 'MALFORMED_REQUEST', message: 'the bytes received are not an HTTP/1.1 request' });
      });

      it('an unknown route: 404 with a JSON code', async () => {
        const r = await get('ingestion', `/v1/no-such-route-${sfx}`);
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({ code: 'NOT_FOUND' });
      });
    });

    describe('suites (V1-V3, S4)', () => {
      const key = `contract-suite-${sfx}`;
      const suite = {
        key,
        description: 'contract test suite',
        default_scorer: { type: 'exact', trim: true },
        pass_threshold: 0.75,
        regression_threshold: 0.1,
        cases: [
          { id: 'route-billing', input: 'I was charged twice.', expected: 'billing', tags: ['routing', 'billing'] },
          { id: 'reply-refund', input: { task: 'draft_reply', ticket: 'Where is my refund?' }, scorer: { type: 'contains', value: ['refund'], ignore_case: true } },
          { id: 'json-null', input: 'return null', expected: null, scorer: { type: 'json_equal' } },
        ],
      };
      // The same suite as YAML (JSON is YAML too, but this is the block style people write).
      const suiteYaml = [
        `key: ${key}`,
        'description: contract test suite',
        'default_scorer: { type: exact, trim: true }',
        'pass_threshold: 0.75',
        'regression_threshold: 0.1',
        'cases:',
        '  - id: route-billing',
        '    input: "I was charged twice."',
        '    expected: billing',
        '    tags: [billing, routing]',
        '  - id: reply-refund',
        '    input: { task: draft_reply, ticket: "Where is my refund?" }',
        '    scorer: { type: contains, value: [refund], ignore_case: true }',
        '  - id: json-null',
        '    input: return null',
        '    expected: null',
        '    scorer: { type: json_equal }',
        '',
      ].join('\n');
      let hashV1 = '';

      it('a first push (JSON) mints version 1: 201, created, with its content hash', async () => {
        const r = await post('ingestion', '/v1/suites', suite);
        expectStatus(r, 201);
        expect(r.json).toMatchObject({ created: true, suite: { suite_key: key, version: 1, case_count: 3, pass_threshold: 0.75, regression_threshold: 0.1, description: 'contract test suite', golden_fixtures: false } });
        expect(r.json.suite.content_hash).toMatch(/^(sha256:)?[0-9a-f]{64}$/);
        expect(r.json.same_content_as).toBeUndefined();
        hashV1 = r.json.suite.content_hash;
      });

      it('the same content again, as JSON and as YAML: 200, the same version 1, nothing new (V2)', async () => {
        const again = await post('ingestion', '/v1/suites', suite);
        expectStatus(again, 200);
        expect(again.json).toMatchObject({ created: false, suite: { suite_key: key, version: 1, content_hash: hashV1 } });
        const yaml = await post('ingestion', '/v1/suites', suiteYaml, 'application/yaml');
        expectStatus(yaml, 200);
        expect(yaml.json).toMatchObject({ created: false, suite: { suite_key: key, version: 1, content_hash: hashV1 } });
      });

      it('a new suite pushed as YAML (application/yaml): 201, version 1', async () => {
        const yamlKey = `contract-yaml-${sfx}`;
        const r = await post('ingestion', '/v1/suites', suiteYaml.replace(`key: ${key}`, `key: ${yamlKey}`), 'application/yaml');
        expectStatus(r, 201);
        expect(r.json).toMatchObject({ created: true, suite: { suite_key: yamlKey, version: 1, case_count: 3 } });
        // Same content but another key: another hash (the key is content).
        expect(r.json.suite.content_hash).not.toBe(hashV1);
      });

      it('changed content mints version 2: 201 with another hash', async () => {
        const r = await post('ingestion', '/v1/suites', { ...suite, description: 'contract test suite, edited' });
        expectStatus(r, 201);
        expect(r.json).toMatchObject({ created: true, suite: { suite_key: key, version: 2, description: 'contract test suite, edited' } });
        expect(r.json.suite.content_hash).not.toBe(hashV1);
      });

      it('GET /v1/suites/:key is the latest version with its cases; /versions/:v a given one, as authored', async () => {
        const latest = await get('ingestion', `/v1/suites/${key}`);
        expectStatus(latest, 200);
        expect(latest.json.suite).toMatchObject({ suite_key: key, version: 2, description: 'contract test suite, edited', case_count: 3 });
        const v1 = await get('ingestion', `/v1/suites/${key}/versions/1`);
        expectStatus(v1, 200);
        const s = v1.json.suite;
        expect(s).toMatchObject({ suite_key: key, version: 1, content_hash: hashV1, description: 'contract test suite', default_scorer: { type: 'exact', trim: true }, pass_threshold: 0.75, regression_threshold: 0.1, golden_fixtures: false, case_count: 3 });
        expect(typeof s.pass_threshold).toBe('number');
        expect(s.created_at).toMatch(ISO);
        expect(s.cases.map((c: any) => c.case_id)).toEqual(['route-billing', 'reply-refund', 'json-null']);
        expect(s.cases[0]).toEqual({ case_id: 'route-billing', input: 'I was charged twice.', expected: 'billing', scorer: null, tags: ['billing', 'routing'] });
        expect(s.cases[1]).toMatchObject({ case_id: 'reply-refund', input: { task: 'draft_reply', ticket: 'Where is my refund?' }, scorer: { type: 'contains', value: ['refund'], ignore_case: true }, tags: [] });
        expect(s.cases[1]).not.toHaveProperty('expected');
        // `expected: null` is the authored value null, not "absent" (docs/suites.md).
        expect(s.cases[2]).toHaveProperty('expected', null);
      });

      it('pushing the content of an older version is a revert: version 3, same_content_as 1', async () => {
        const r = await post('ingestion', '/v1/suites', suite);
        expectStatus(r, 201);
        expect(r.json).toMatchObject({ created: true, same_content_as: 1, suite: { version: 3, content_hash: hashV1 } });
      });

      it('GET /v1/suites lists every stored suite by key: latest version, its case count, the number of versions; paged', async () => {
        // A suite pushed and never run is listed too (the CLI's "did you mean" reads this list).
        const only = `contract-listed-${sfx}`;
        expectStatus(await post('ingestion', '/v1/suites', { ...suite, key: only, cases: suite.cases.slice(0, 2) }), 201);
        const found: Record<string, any> = {};
        let total = -1;
        for (let offset = 0; total < 0 || offset < total; offset += 500) {
          const page = await get('ingestion', `/v1/suites?offset=${offset}&limit=500`);
          expectStatus(page, 200);
          expect(page.json).toMatchObject({ offset, limit: 500 });
          total = page.json.total;
          const keys = page.json.items.map((i: any) => i.suite_key);
          expect(keys).toEqual([...keys].sort());
          for (const item of page.json.items) found[item.suite_key] = item;
          if (page.json.items.length === 0) break;
        }
        expect(Object.keys(found)).toHaveLength(total);
        expect(found[key]).toMatchObject({ suite_key: key, latest_version: 3, case_count: 3, versions: 3, content_hash: hashV1, description: 'contract test suite' });
        expect(found[key].created_at).toMatch(ISO);
        expect(found[key].first_created_at).toMatch(ISO);
        expect(found[key].first_created_at <= found[key].created_at).toBe(true);
        expect(found[only]).toMatchObject({ suite_key: only, latest_version: 1, case_count: 2, versions: 1 });
        const one = await get('ingestion', '/v1/suites?limit=1');
        expectStatus(one, 200);
        expect(one.json.items).toHaveLength(1);
        expect(one.json).toMatchObject({ offset: 0, limit: 1, total });
        for (const q of ['limit=0', 'limit=501', 'offset=-1', 'offset=x']) {
          const bad = await get('ingestion', `/v1/suites?${q}`);
          expect([q, bad.status, bad.json.code, bad.json.field]).toEqual([q, 400, 'INVALID_REQUEST', q.split('=')[0]]);
        }
      });

      it('unknown suite, unknown version, bad version: 404/404/400 with codes', async () => {
        const none = await get('ingestion', `/v1/suites/contract-none-${sfx}`);
        expect(none.status).toBe(404);
        expect(none.json).toMatchObject({ code: 'SUITE_NOT_FOUND', field: 'key' });
        const v9 = await get('ingestion', `/v1/suites/${key}/versions/9`);
        expect(v9.status).toBe(404);
        expect(v9.json).toMatchObject({ code: 'SUITE_VERSION_NOT_FOUND', field: 'version' });
        const bad = await get('ingestion', `/v1/suites/${key}/versions/zero`);
        expect(bad.status).toBe(400);
        expect(bad.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'version' });
      });

      it('a case with an unknown scorer type: 422 SUITE_INVALID naming the case and the field; nothing stored', async () => {
        const badKey = `contract-bad-scorer-${sfx}`;
        const r = await post('ingestion', '/v1/suites', {
          ...exactSuite(badKey, 2),
          cases: [
            { id: 'fine-case', input: 'q', expected: 'yes' },
            { id: 'weird-scorer-case', input: 'q', expected: 'yes', scorer: { type: 'telepathy' } },
          ],
        });
        expect(r.status).toBe(422);
        expect(r.json.code).toBe('SUITE_INVALID');
        expect(r.json.field).toMatch(/^cases\[1\]\.scorer/);
        expect(r.json.message).toContain('weird-scorer-case');
        expect(r.json.details.errors).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'SCORER_UNKNOWN', case_id: 'weird-scorer-case', case_index: 1 })]));
        const stored = await get('ingestion', `/v1/suites/${badKey}`);
        expect(stored.status).toBe(404);
      });

      it('duplicate case ids: 422 SUITE_INVALID with CASE_ID_DUPLICATE naming the case', async () => {
        const r = await post('ingestion', '/v1/suites', {
          ...exactSuite(`contract-dup-${sfx}`, 1),
          cases: [
            { id: 'first', input: 'q', expected: 'yes' },
            { id: 'twice-used', input: 'q', expected: 'yes' },
            { id: 'twice-used', input: 'q2', expected: 'no' },
          ],
        });
        expect(r.status).toBe(422);
        expect(r.json.code).toBe('SUITE_INVALID');
        expect(r.json.field).toMatch(/^cases\[2\]/);
        expect(r.json.message).toContain('twice-used');
        expect(r.json.details.errors).toEqual([expect.objectContaining({ code: 'CASE_ID_DUPLICATE', case_index: 2 })]);
      });

      it('broken YAML: 422 SUITE_INVALID with YAML_SYNTAX and a position', async () => {
        const r = await post('ingestion', '/v1/suites', `key: contract-broken-${sfx}\ncases: [\n  - id: x\n`, 'application/yaml');
        expect(r.status).toBe(422);
        expect(r.json.code).toBe('SUITE_INVALID');
        expect(r.json.details.errors[0]).toMatchObject({ code: 'YAML_SYNTAX' });
        expect(r.json.details.errors[0].line).toBeGreaterThanOrEqual(1);
      });
    });

    describe('runs (R1-R6, D1)', () => {
      const key = `contract-runs-${sfx}`;
      const runId = `contract-run-${sfx}`;
      // c0..c5 right, c6 wrong, c7 without an output: 6 of 8 pass, one missing (R1).
      const body = () => ({ run_id: runId, suite_key: key, subject_id: 'contract-bot', variant: 'prompt-v1', source: 'ci', outputs: outputs(7, 6) });
      let first: any;

      beforeAll(async () => {
        await pushSuite(exactSuite(key, 8, { pass_threshold: 0.7 }));
      }, 60_000);

      it('POST /v1/runs with inline outputs: 200, the completed run, its EvalResult (R3) and its regression decision', async () => {
        first = await run(body());
        const ci = wilson(6, 8);
        expect(first.run).toMatchObject({
          run_id: runId,
          suite_key: key,
          suite_version: 1,
          subject_kind: 'agent',
          subject_id: 'contract-bot',
          variant: 'prompt-v1',
          baseline_run_id: null,
          source: 'ci',
          case_count: 8,
          status: 'completed',
          scored: 8,
          passed: 6,
          missing_outputs: 1,
          pass_threshold: 0.7,
          regression_threshold: 0.1,
        });
        expect(first.run.opened_at).toMatch(ISO);
        expect(first.run.completed_at).toMatch(ISO);
        expect(first.run.summary).toMatchObject({ n: 8, passed: 6, score: 0.75, pass_rate: 0.75, run_passed: true });
        const r = first.eval_result;
        expect(Object.keys(r).sort()).toEqual(['metrics', 'occurred_at', 'passed', 'run_id', 'score', 'subject_id', 'subject_kind', 'suite', 'suite_version', 'variant']);
        expect(r).toMatchObject({ suite: key, suite_version: 1, subject_kind: 'agent', subject_id: 'contract-bot', variant: 'prompt-v1', run_id: runId, score: 0.75, passed: true });
        expect(r.occurred_at).toMatch(ISO);
        expect(r.metrics).toMatchObject({ pass_rate: 0.75, passed: 6, n: 8, missing_outputs: 1, pass_threshold: 0.7 });
        expect(r.metrics.pass_rate_ci.level).toBe(0.95);
        expect(r.metrics.pass_rate_ci.lower).toBeCloseTo(ci.lower, 9);
        expect(r.metrics.pass_rate_ci.upper).toBeCloseTo(ci.upper, 9);
        expect(first.run.summary.pass_rate_ci).toEqual(r.metrics.pass_rate_ci);
        expect(first.regression).toEqual({ verdict: 'no_baseline', baseline_run_id: null, chosen_by: null, comparison: null, completeness: 'incomplete', baseline_eligible: false, baseline_ineligible_reason: 'incomplete' });
      }, 60_000);

      it('below the pass threshold the EvalResult says passed: false (R2)', async () => {
        const low = await run({ run_id: `contract-run-low-${sfx}`, suite_key: key, subject_id: 'contract-low', outputs: outputs(8, 5) });
        expect(low.eval_result).toMatchObject({ passed: false, score: 0.625, variant: null, metrics: { passed: 5, n: 8, missing_outputs: 0 } });
        expect(low.run.summary.run_passed).toBe(false);
      }, 60_000);

      it('the same run_id again is the same run (idempotent), not a second one', async () => {
        const again = await run(body());
        expect(again.run).toEqual(first.run);
        expect(again.eval_result).toEqual(first.eval_result);
        expect(again.regression).toEqual(first.regression);
      }, 60_000);

      it('the same run_id with another subject: 409 RUN_ID_CONFLICT', async () => {
        const r = await post('ingestion', '/v1/runs', { ...body(), subject_kind: 'agent', subject_id: 'someone-else' });
        expect(r.status).toBe(409);
        expect(r.json).toMatchObject({ code: 'RUN_ID_CONFLICT', field: 'run_id' });
      }, 60_000);

      it('the same run_id with other outputs: 409 RUN_ID_CONFLICT (the request hash covers the outputs, R7)', async () => {
        const other = await post('ingestion', '/v1/runs', { ...body(), subject_kind: 'agent', outputs: outputs(7, 5) });
        expect(other.status).toBe(409);
        expect(other.json).toMatchObject({ code: 'RUN_ID_CONFLICT', field: 'run_id' });
        const fewer = await post('ingestion', '/v1/runs', { ...body(), subject_kind: 'agent', outputs: outputs(6, 6) });
        expect(fewer.status).toBe(409);
      }, 60_000);

      it('an empty outputs list: 422 EMPTY_RUN, and no run is opened (R7)', async () => {
        const emptyId = `contract-empty-${sfx}`;
        const r = await post('ingestion', '/v1/runs', { run_id: emptyId, suite_key: key, subject_kind: 'agent', subject_id: 'x', outputs: [] });
        expect(r.status).toBe(422);
        expect(r.json).toMatchObject({ code: 'EMPTY_RUN', field: 'outputs' });
        expect(r.json.message).toMatch(/^the outputs list is empty: /);
        expect((await get('read', `/v1/runs/${emptyId}`)).status).toBe(404);
      }, 60_000);

      it('a missing required field: 400 with code and field, and the output never echoed (D1)', async () => {
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-bad-${sfx}`, suite_key: key, subject_id: 'x', outputs: [{ case_id: 'c0', output: CANARY }] });
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'subject_kind' });
        expect(r.json.message).toContain('subject_kind');
        expect(r.text).not.toContain(CANARY);
        expect(r.text).not.toContain('CANARY');
      });

      it('an unknown field is refused by where it is, never by its name, nor with the output (D1)', async () => {
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-bad2-${sfx}`, suite_key: key, subject_kind: 'agent', subject_id: 'x', [`${CANARY}-key`]: 1, outputs: [{ case_id: 'c0', output: CANARY }] });
        expect(r.status).toBe(400);
        expect(r.json.code).toBe('INVALID_REQUEST');
        expect(typeof r.json.field).toBe('string');
        expect(r.text).not.toContain('CANARY');
      });

      it('an output for a case the suite lacks: 422 UNKNOWN_CASE naming the output, not echoing it', async () => {
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-bad3-${sfx}`, suite_key: key, subject_kind: 'agent', subject_id: 'x', outputs: [{ case_id: 'c0', output: 'yes' }, { case_id: 'no-such-case', output: CANARY }] });
        expect(r.status).toBe(422);
        expect(r.json).toMatchObject({ code: 'UNKNOWN_CASE', field: 'outputs[1].case_id' });
        expect(r.text).not.toContain('CANARY');
      });

      it('malformed JSON: 400 MALFORMED_JSON without a piece of the body', async () => {
        const r = await post('ingestion', '/v1/runs', `{"run_id":"x","outputs":[{"case_id":"c0","output":"${CANARY}"`);
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ code: 'MALFORMED_JSON', field: 'body' });
        expect(r.text).not.toContain('CANARY');
      });

      it('an output over 512 KiB: 413 OUTPUT_TOO_LARGE naming the output, not echoing it', async () => {
        const big = CANARY.repeat(Math.ceil((600 * 1024) / CANARY.length));
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-big-${sfx}`, suite_key: key, subject_kind: 'agent', subject_id: 'x', outputs: [{ case_id: 'c0', output: big }] });
        expect(r.status).toBe(413);
        expect(r.json).toMatchObject({ code: 'OUTPUT_TOO_LARGE', field: 'outputs[0].output' });
        expect(r.text).not.toContain('CANARY');
      });

      it('a body over the server limit (HTTP_BODY_LIMIT_MB): 413 PAYLOAD_TOO_LARGE, nothing of it echoed', async () => {
        const huge = CANARY.repeat(Math.ceil((1200 * 1024) / CANARY.length));
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-huge-${sfx}`, suite_key: key, subject_kind: 'agent', subject_id: 'x', outputs: [{ case_id: 'c0', output: huge }] });
        expect(r.status).toBe(413);
        expect(r.json).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
        expect(r.text).not.toContain('CANARY');
      });

      it('an unknown suite: 404 SUITE_NOT_FOUND on suite_key', async () => {
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-nosuite-${sfx}`, suite_key: `contract-none-${sfx}`, subject_kind: 'agent', subject_id: 'x', outputs: [] });
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({ code: 'SUITE_NOT_FOUND', field: 'suite_key' });
      });

      it('GET /v1/runs/:id: the run and its EvalResult as POST answered; ?include=cases adds the per-case results by case id', async () => {
        const plain = await get('read', `/v1/runs/${runId}`);
        expectStatus(plain, 200);
        expect(plain.json.run).toEqual(first.run);
        expect(plain.json.eval_result).toEqual(first.eval_result);
        expect(plain.json.regression).toEqual(first.regression);
        expect(plain.json).not.toHaveProperty('cases');
        const withCases = await get('read', `/v1/runs/${runId}?include=cases`);
        expectStatus(withCases, 200);
        const cases = withCases.json.cases;
        expect(cases.map((c: any) => c.case_id)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
        for (const c of cases.slice(0, 6)) expect(c).toMatchObject({ scorer: 'exact', score: 1, passed: true, label: 'match' });
        expect(cases[6]).toMatchObject({ case_id: 'c6', scorer: 'exact', score: 0, passed: false, label: 'mismatch' });
        expect(cases[7]).toMatchObject({ case_id: 'c7', score: 0, passed: false, label: 'missing_output' });
        for (const c of cases) {
          expect(Object.keys(c).sort()).toEqual(['case_id', 'label', 'passed', 'score', 'scored_at', 'scorer', 'scorer_version']);
          expect(c.scored_at).toMatch(ISO);
        }
      });

      it('GET /v1/runs/:id/events: the SSE replay, one case frame per case then the summary, the same bytes twice (R6)', async () => {
        const a = await call('read', 'GET', `/v1/runs/${runId}/events`);
        expectStatus(a, 200);
        expect(a.headers.get('content-type')).toContain('text/event-stream');
        const frames = a.text.split('\n\n').filter(Boolean).map((f) => {
          const [event, data] = f.split('\n');
          return { event: event.replace(/^event: /, ''), data: JSON.parse(data.replace(/^data: /, '')) };
        });
        expect(frames.map((f) => f.event)).toEqual([...Array(8).fill('case'), 'summary']);
        expect(frames[6].data).toEqual({ case_id: 'c6', scorer: 'exact', scorer_version: expect.any(String), score: 0, passed: false, label: 'mismatch' });
        expect(frames[8].data).toMatchObject({ run_id: runId, status: 'completed', suite: key, suite_version: 1, case_count: 8, missing_outputs: 1, frames: 8, n: 8, passed: 6, pass_rate: 0.75, run_passed: true });
        const b = await call('read', 'GET', `/v1/runs/${runId}/events`);
        expect(b.text).toBe(a.text);
      });

      it('an unknown run: 404 RUN_NOT_FOUND on GET /v1/runs/:id and on its events', async () => {
        const r = await get('read', `/v1/runs/contract-nope-${sfx}`);
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({ code: 'RUN_NOT_FOUND', field: 'id' });
        expect(r.json.message).toContain(`contract-nope-${sfx}`);
        const e = await get('read', `/v1/runs/contract-nope-${sfx}/events`);
        expect(e.status).toBe(404);
        expect(e.json).toMatchObject({ code: 'RUN_NOT_FOUND' });
      });
    });

    describe('regression and findings (G1-G6)', () => {
      const key = `contract-reg-${sfx}`;
      const baseId = `contract-base-${sfx}`;
      const candId = `contract-cand-${sfx}`;
      let cand: any;

      beforeAll(async () => {
        await pushSuite(exactSuite(key, 10, { regression_threshold: 0.1 }));
      }, 60_000);

      it('a candidate with many failures against a good baseline: regressed, with the Newcombe interval and both counts (G2, G3)', async () => {
        const base = await run({ run_id: baseId, suite_key: key, subject_id: 'reg-bot', outputs: outputs(10, 9) });
        expect(base.regression.verdict).toBe('no_baseline');
        cand = await run({ run_id: candId, suite_key: key, subject_id: 'reg-bot', outputs: outputs(10, 3) });
        expect(cand.regression).toMatchObject({ verdict: 'regressed', baseline_run_id: baseId, chosen_by: 'automatic' });
        const c = cand.regression.comparison;
        expect(c.run).toMatchObject({ passed: 3, n: 10 });
        expect(c.baseline).toMatchObject({ passed: 9, n: 10 });
        expect(c.score_drop).toBeCloseTo(0.6, 12);
        expect(c.pass_rate_diff.diff).toBeCloseTo(-0.6, 12);
        expect(c.pass_rate_diff.level).toBe(0.95);
        // Newcombe (1998) Table II, method 10, example (b): 9/10 vs 3/10 -> [0.1705, 0.8090]; here run - baseline.
        expect(Math.abs(c.pass_rate_diff.lower - -0.809)).toBeLessThanOrEqual(1e-4);
        expect(Math.abs(c.pass_rate_diff.upper - -0.1705)).toBeLessThanOrEqual(1e-4);
        const served = await get('read', `/v1/runs/${candId}`);
        expectStatus(served, 200);
        expect(served.json.regression).toEqual(cand.regression);
      }, 60_000);

      it('GET /v1/findings/:run_id: the stored finding, the payload of finding.reported', async () => {
        const r = await get('regression', `/v1/findings/${candId}`);
        expectStatus(r, 200);
        const f = r.json;
        expect(f).toMatchObject({
          kind: 'eval_regression',
          run_id: candId,
          baseline_run_id: baseId,
          suite: key,
          suite_version: 1,
          subject_kind: 'agent',
          subject_id: 'reg-bot',
          variant: null,
          run: { passed: 3, n: 10 },
          baseline: { passed: 9, n: 10 },
          // One suite version: the same 10 cases scored twice, so the paired interval decided (G7).
          pass_rate_diff: { level: 0.95, method: 'newcombe_paired_10' },
        });
        expect(f.finding_id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/);
        expect(f.occurred_at).toMatch(ISO);
        expect(f.score_drop).toBeCloseTo(0.6, 12);
        expect(f.pass_rate_diff.diff).toBeCloseTo(-0.6, 12);
        expect(cand.regression.comparison.decided_by).toBe('paired');
        expect(f.pass_rate_diff.lower).toBe(cand.regression.comparison.paired_diff.lower);
        expect(f.pass_rate_diff.upper).toBe(cand.regression.comparison.paired_diff.upper);
        expect(f.pass_rate_diff.lower).toBeLessThanOrEqual(f.pass_rate_diff.diff);
        expect(f.pass_rate_diff.upper).toBeLessThan(0);
      });

      it('GET /v1/findings?suite_key= lists it (and only the suite\'s findings)', async () => {
        const r = await get('regression', `/v1/findings?suite_key=${key}`);
        expectStatus(r, 200);
        expect(r.json.findings).toHaveLength(1);
        expect(r.json.findings[0]).toEqual((await get('regression', `/v1/findings/${candId}`)).json);
        const other = await get('regression', `/v1/findings?suite_key=contract-none-${sfx}`);
        expect(other.json).toEqual({ findings: [] });
        const bad = await get('regression', '/v1/findings?limit=0');
        expect(bad.status).toBe(400);
        expect(bad.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'limit' });
      });

      it('a run with no finding: 404 FINDING_NOT_FOUND', async () => {
        for (const id of [baseId, `contract-nope-${sfx}`]) {
          const r = await get('regression', `/v1/findings/${id}`);
          expect(r.status).toBe(404);
          expect(r.json).toMatchObject({ code: 'FINDING_NOT_FOUND', field: 'run_id' });
        }
      });
    });

    describe('baseline pins (G5)', () => {
      const key = `contract-pins-${sfx}`;
      const otherKey = `contract-pins-other-${sfx}`;

      beforeAll(async () => {
        await pushSuite(exactSuite(key, 5, { regression_threshold: 0.5 }));
        await pushSuite(exactSuite(otherKey, 5));
      }, 60_000);

      it('POST /v1/baselines pins a run: 201; GET /v1/baselines lists it; the next run compares with it', async () => {
        const p1 = await run({ run_id: `contract-p1-${sfx}`, suite_key: key, subject_id: 'pinned-bot', outputs: outputs(5, 4) });
        await run({ run_id: `contract-p2-${sfx}`, suite_key: key, subject_id: 'pinned-bot', outputs: outputs(5, 5) });
        const pin = await post('regression', '/v1/baselines', { suite_key: key, subject_kind: 'agent', subject_id: 'pinned-bot', run_id: p1.run.run_id });
        expectStatus(pin, 201);
        expect(pin.json).toEqual({ pin: { suite_key: key, subject_kind: 'agent', subject_id: 'pinned-bot', variant: null, run_id: `contract-p1-${sfx}` } });
        const listed = await get('regression', `/v1/baselines?suite_key=${key}`);
        expectStatus(listed, 200);
        expect(listed.json.pins).toEqual([{ suite_key: key, subject_kind: 'agent', subject_id: 'pinned-bot', variant: null, run_id: `contract-p1-${sfx}`, pinned_at: expect.stringMatching(ISO) }]);
        const p3 = await run({ run_id: `contract-p3-${sfx}`, suite_key: key, subject_id: 'pinned-bot', outputs: outputs(5, 5) });
        expect(p3.regression).toMatchObject({ chosen_by: 'pinned', baseline_run_id: `contract-p1-${sfx}`, verdict: 'no_regression' });
      }, 60_000);

      it('a pin of a run of another suite: 422 BASELINE_OTHER_SUITE; of an unknown run: 404; a bad body: 400', async () => {
        const foreign = await run({ run_id: `contract-foreign-${sfx}`, suite_key: otherKey, subject_id: 'pinned-bot', outputs: outputs(5, 5) });
        const r = await post('regression', '/v1/baselines', { suite_key: key, subject_kind: 'agent', subject_id: 'pinned-bot', run_id: foreign.run.run_id });
        expect(r.status).toBe(422);
        expect(r.json).toMatchObject({ code: 'BASELINE_OTHER_SUITE', field: 'run_id' });
        const unknown = await post('regression', '/v1/baselines', { suite_key: key, subject_kind: 'agent', subject_id: 'pinned-bot', run_id: `contract-nope-${sfx}` });
        expect(unknown.status).toBe(404);
        expect(unknown.json).toMatchObject({ code: 'RUN_NOT_FOUND', field: 'run_id' });
        const bad = await post('regression', '/v1/baselines', { suite_key: 'Not A Key', subject_kind: 'agent', subject_id: 'pinned-bot', run_id: foreign.run.run_id });
        expect(bad.status).toBe(400);
        expect(bad.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'suite_key' });
        const listed = await get('regression', `/v1/baselines?suite_key=${key}`);
        expect(listed.json.pins.map((p: any) => p.run_id)).toEqual([`contract-p1-${sfx}`]);
      }, 60_000);

      it('an explicit baseline_run_id of another suite on POST /v1/runs: 422 BASELINE_OTHER_SUITE', async () => {
        const r = await post('ingestion', '/v1/runs', { run_id: `contract-x-${sfx}`, suite_key: key, subject_kind: 'agent', subject_id: 'pinned-bot', baseline_run_id: `contract-foreign-${sfx}`, outputs: outputs(5, 5) });
        expect(r.status).toBe(422);
        expect(r.json).toMatchObject({ code: 'BASELINE_OTHER_SUITE', field: 'baseline_run_id' });
      }, 60_000);
    });

    describe('the gate (GT1-GT6)', () => {
      const key = `contract-gate-${sfx}`;
      let failedGateId = '';

      beforeAll(async () => {
        await pushSuite(exactSuite(key, 10, { pass_threshold: 0.8 }));
      }, 60_000);

      it('POST /v1/gate with a good run: 200, pass, no reasons, every rate with its denominator and interval', async () => {
        const r = await post('ingestion', '/v1/gate', { suite_key: key, subject_kind: 'agent', subject_id: 'gate-good', outputs: outputs(10, 10) });
        expectStatus(r, 200);
        const g = r.json;
        expect(g).toMatchObject({ recorded_verdict: 'pass', effective_verdict: 'pass', reasons: [], budget: { decision: 'not_needed' }, judge: { used: false }, sample: null, override: null });
        expect(typeof g.gate_id).toBe('string');
        expect(g.recorded_at).toMatch(ISO);
        expect(g.warnings.map((w: any) => w.code)).toEqual(['no_baseline']);
        expect(g.run).toMatchObject({ suite_key: key, suite_version: 1, subject_id: 'gate-good', n: 10, passed: 10, pass_rate: 1, score: 1, pass_threshold: 0.8 });
        expect(g.run.pass_rate_ci).toMatchObject({ upper: 1, level: 0.95 });
        expect(g.run.pass_rate_ci.lower).toBeCloseTo(wilson(10, 10).lower, 9);
        expect(g.cases).toHaveLength(10);
        expect(g.cases[0]).toEqual({ case_id: 'c0', passed: true, score: 1, label: 'match' });
        const status = await get('ingestion', `/v1/gate/${g.gate_id}`);
        expectStatus(status, 200);
        expect(status.json).toMatchObject({ gate_id: g.gate_id, recorded_verdict: 'pass', effective_verdict: 'pass', run: { run_id: g.run.run_id } });
      }, 60_000);

      it('below the pass threshold: fail with reason below_pass_threshold', async () => {
        const r = await post('ingestion', '/v1/gate', { suite_key: key, subject_kind: 'agent', subject_id: 'gate-low', outputs: outputs(10, 5) });
        expectStatus(r, 200);
        expect(r.json).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'fail', run: { n: 10, passed: 5, pass_rate: 0.5 } });
        expect(r.json.reasons.map((x: any) => x.code)).toEqual(['below_pass_threshold']);
        expect(typeof r.json.reasons[0].message).toBe('string');
        failedGateId = r.json.gate_id;
      }, 60_000);

      it('an override changes the effective verdict, never the recorded one (GT5)', async () => {
        const short = await post('ingestion', `/v1/gate/${failedGateId}/override`, { reason: 'too short' });
        expect(short.status).toBe(400);
        expect(short.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'reason' });
        const r = await post('ingestion', `/v1/gate/${failedGateId}/override`, { reason: 'known flaky upstream, accepted by the on-call lead' });
        expectStatus(r, 200);
        expect(r.json).toMatchObject({ gate_id: failedGateId, recorded_verdict: 'fail', effective_verdict: 'pass' });
        expect(r.json.override).toMatchObject({ before: 'fail', after: 'pass', reason: 'known flaky upstream, accepted by the on-call lead' });
        const status = await get('ingestion', `/v1/gate/${failedGateId}`);
        expect(status.json).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass' });
        expect(status.json.overrides).toHaveLength(1);
      }, 60_000);

      it('an unknown suite or gate: 404 with a code', async () => {
        const r = await post('ingestion', '/v1/gate', { suite_key: `contract-none-${sfx}`, subject_kind: 'agent', subject_id: 'x', outputs: [] });
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({ code: 'SUITE_NOT_FOUND', field: 'suite_key' });
        const g = await get('ingestion', `/v1/gate/contract-nope-${sfx}`);
        expect(g.status).toBe(404);
        expect(g.json).toMatchObject({ code: 'GATE_NOT_FOUND' });
      });

      it('GT7: a family of suites - each gated on its own, one family gate readable by its id; malformed families name the field', async () => {
        const other = `contract-gate-b-${sfx}`;
        await pushSuite(exactSuite(other, 10, { pass_threshold: 0.8 }));
        const r = await post('ingestion', '/v1/gate', { subject_kind: 'agent', subject_id: 'gate-family', suites: [{ suite_key: key, outputs: outputs(10, 10) }, { suite_key: other, outputs: outputs(10, 5) }] });
        expectStatus(r, 200);
        expect(r.json).toMatchObject({ kind: 'family', recorded_verdict: 'fail', effective_verdict: 'fail', family: { method: 'holm', tests: 0, alpha: 0.05 } });
        expect(r.json.suites.map((s: any) => [s.suite_key, s.verdict, s.regression_p])).toEqual([
          [key, 'pass', null],
          [other, 'fail', null],
        ]);
        expect(r.json.reasons).toEqual([expect.objectContaining({ code: 'below_pass_threshold', suite_key: other })]);
        const family = await get('ingestion', `/v1/gate/${r.json.gate_id}`);
        expectStatus(family, 200);
        expect(family.json).toMatchObject({ gate_id: r.json.gate_id, kind: 'family', effective_verdict: 'fail', overrides: [] });
        const own = await get('ingestion', `/v1/gate/${r.json.suites[1].gate_id}`);
        expect(own.json).toMatchObject({ recorded_verdict: 'fail', run: { suite_key: other, passed: 5 } });

        const one = await post('ingestion', '/v1/gate', { subject_kind: 'agent', subject_id: 'x', suites: [{ suite_key: key, outputs: [] }] });
        expect([one.status, one.json.code, one.json.field]).toEqual([400, 'INVALID_REQUEST', 'suites']);
        const twice = await post('ingestion', '/v1/gate', { subject_kind: 'agent', subject_id: 'x', suites: [{ suite_key: key, outputs: [] }, { suite_key: key, outputs: [] }] });
        expect([twice.status, twice.json.code, twice.json.field]).toEqual([422, 'DUPLICATE_SUITE', 'suites[1].suite_key']);
      }, 60_000);
    });

    describe('scorecards (SC1)', () => {
      const key = `contract-cards-${sfx}`;
      const ids = [1, 2, 3].map((i) => `contract-card-${i}-${sfx}`);
      let last: any;

      beforeAll(async () => {
        // regression_threshold 0.5: the drop from 5/5 to 3/5 is not a regression, so every run is a baseline candidate.
        await pushSuite(exactSuite(key, 5, { regression_threshold: 0.5 }));
        const passing = [4, 5, 3];
        for (let i = 0; i < 3; i++) last = await run({ run_id: ids[i], suite_key: key, subject_id: 'card-bot', outputs: outputs(5, passing[i]) });
        await run({ run_id: `contract-card-other-${sfx}`, suite_key: key, subject_id: 'card-other', outputs: outputs(5, 5) });
      }, 60_000);

      it('GET /v1/scorecards?suite_key&subject_id (JSON): one card, every rate with its denominator and interval', async () => {
        const r = await get('read', `/v1/scorecards?suite_key=${key}&subject_id=card-bot`);
        expectStatus(r, 200);
        expect(r.json.scorecards).toHaveLength(1);
        const card = r.json.scorecards[0];
        expect(card).toMatchObject({ suite_key: key, subject_kind: 'agent', subject_id: 'card-bot', runs: 3, latest_run_id: ids[2], latest_suite_version: 1, latest_verdict: last.regression.verdict });
        expect(card.latest_completed_at).toMatch(ISO);
        expect(card.latest_pass_rate).toMatchObject({ rate: 0.6, passed: 3, n: 5, level: 0.95 });
        expect(card.latest_pass_rate.lower).toBeCloseTo(wilson(3, 5).lower, 9);
        expect(card.latest_pass_rate.upper).toBeCloseTo(wilson(3, 5).upper, 9);
        expect(card.overall_pass_rate).toMatchObject({ rate: 0.8, passed: 12, n: 15, level: 0.95 });
        expect(card.overall_pass_rate.lower).toBeCloseTo(wilson(12, 15).lower, 9);
        expect(card.mean_score).toBeCloseTo(0.8, 12);
        // Least squares over (0, 0.8), (1, 1.0), (2, 0.6): slope -0.1 per run.
        expect(card.trend).toMatchObject({ direction: 'declining', runs: 3, window: 10, first_run_id: ids[0], last_run_id: ids[2] });
        expect(card.trend.slope_per_run).toBeCloseTo(-0.1, 9);
        const all = await get('read', `/v1/scorecards?suite_key=${key}`);
        expect(all.json.scorecards.map((c: any) => c.subject_id).sort()).toEqual(['card-bot', 'card-other']);
      });

      it('format=csv: text/csv, the documented header, one row per card with the JSON values', async () => {
        const json = (await get('read', `/v1/scorecards?suite_key=${key}&subject_id=card-bot`)).json.scorecards[0];
        const r = await get('read', `/v1/scorecards?suite_key=${key}&subject_id=card-bot&format=csv`);
        expectStatus(r, 200);
        expect(r.headers.get('content-type')).toContain('text/csv');
        const lines = r.text.split('\r\n');
        expect(lines[0].split(',')).toEqual(SCORECARD_CSV_COLUMNS_DOCUMENTED);
        expect(lines).toHaveLength(3);
        expect(lines[2]).toBe('');
        const row = Object.fromEntries(lines[0].split(',').map((h, i) => [h, lines[1].split(',')[i]]));
        expect(row).toEqual({
          suite_key: key,
          subject_kind: 'agent',
          subject_id: 'card-bot',
          runs: '3',
          latest_run_id: ids[2],
          latest_completed_at: json.latest_completed_at,
          latest_suite_version: '1',
          latest_pass_rate: '0.600000',
          latest_passed: '3',
          latest_n: '5',
          latest_ci_lower: json.latest_pass_rate.lower.toFixed(6),
          latest_ci_upper: json.latest_pass_rate.upper.toFixed(6),
          overall_pass_rate: '0.800000',
          overall_passed: '12',
          overall_n: '15',
          overall_ci_lower: json.overall_pass_rate.lower.toFixed(6),
          overall_ci_upper: json.overall_pass_rate.upper.toFixed(6),
          mean_score: '0.800000',
          trend_slope_per_run: json.trend.slope_per_run.toFixed(6),
          trend_direction: 'declining',
          trend_runs: '3',
          latest_verdict: json.latest_verdict,
          latest_completeness: 'complete',
          runs_incomplete: '0',
          latest_cases_needed: '',
          // J9: no judge case in this suite, so no judge-corrected rate (docs/scorecards.md).
          latest_judge_corrected_scope: '',
          latest_judge_corrected_rate: '',
          latest_judge_corrected_ci_lower: '',
          latest_judge_corrected_ci_upper: '',
          latest_judge_passed: '',
          latest_judge_n: '',
          latest_judge_sensitivity_x: '',
          latest_judge_sensitivity_n: '',
          latest_judge_specificity_x: '',
          latest_judge_specificity_n: '',
        });
      });

      it('a bad format or window: 400 INVALID_REQUEST naming the parameter', async () => {
        const f = await get('read', '/v1/scorecards?format=xml');
        expect(f.status).toBe(400);
        expect(f.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'format' });
        const w = await get('read', '/v1/scorecards?window=1');
        expect(w.status).toBe(400);
        expect(w.json).toMatchObject({ code: 'INVALID_REQUEST', field: 'window' });
      });
    });

    describe('hostile input (issue 16): clean 400/422 answers with codes, never a 500', () => {
      const key = `contract-hostile-${sfx}`;
      const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

      beforeAll(async () => {
        await pushSuite(exactSuite(key, 2));
      }, 60_000);

      it.each([
        ['POST /v1/runs', '/v1/runs'],
        ['POST /v1/gate', '/v1/gate'],
      ])('%s with a JSON object nested 100 000 deep: 400 BODY_TOO_DEEP, before anything walks it', async (_name, route) => {
        const body = `{"suite_key":"${key}","subject_kind":"agent","subject_id":"deep","outputs":[{"case_id":"c0","output":"yes"}],"x":${deepObject(100_000)}}`;
        const r = await post('ingestion', route, body);
        expect(r.status).toBe(400);
        expect(r.json).toMatchObject({ code: 'BODY_TOO_DEEP', field: 'body' });
        expect(r.json.message).toMatch(/deeper than \d+ levels/);
        const arrays = await post('ingestion', route, `{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
        expect([arrays.status, arrays.json.code]).toEqual([400, 'BODY_TOO_DEEP']);
      });

      it.each([
        ['a NUL in an input', { input: 'q\u0000' }, {}, 'cases[0].input'],
        ['a lone surrogate in an input', { input: { text: 'q\ud800' } }, {}, 'cases[0].input.text'],
        ['a NUL in an expected value', { expected: 'y\u0000es' }, {}, 'cases[0].expected'],
        ['a lone surrogate in an expected value', { expected: 'yes\udfff' }, {}, 'cases[0].expected'],
        ['a NUL in the description', {}, { description: 'a\u0000b' }, 'description'],
        ['a lone surrogate in the description', {}, { description: 'a\udc00b' }, 'description'],
      ])("a suite with %s: 422 SUITE_INVALID naming the field; nothing stored", async (_name, caseOver, suiteOver, field) => {
        const badKey = `contract-unstorable-${field.replace(/[^a-z]/g, '')}-${sfx}`;
        const suite = { ...exactSuite(badKey, 1), ...suiteOver, cases: [{ id: 'c0', input: 'q', expected: 'yes', ...caseOver }] };
        const r = await post('ingestion', '/v1/suites', suite);
        expect(r.status).toBe(422);
        expect(r.json).toMatchObject({ code: 'SUITE_INVALID', field });
        expect(r.json.details.errors[0]).toMatchObject({ code: 'VALUE_NOT_JSON', field });
        expect((await get('ingestion', `/v1/suites/${badKey}`)).status).toBe(404);
      });

      it('an output may contain a NUL or a lone surrogate: scored, never stored (D1)', async () => {
        const out = await run({ run_id: `contract-nul-output-${sfx}`, suite_key: key, subject_id: 'nul', outputs: [{ case_id: 'c0', output: 'yes\u0000' }, { case_id: 'c1', output: 'y\ud800' }] });
        expect(out.run).toMatchObject({ status: 'completed', scored: 2, passed: 0 });
      }, 60_000);

      it('YAML nested too deeply: 422 SUITE_INVALID with a plain message, never the engine\'s', async () => {
        for (const yaml of [`key: ${key}-yaml\ncases: ${'['.repeat(100_000)}`, `key: ${key}-yaml\ncases:\n${Array.from({ length: 600 }, (_, i) => `${' '.repeat(i + 2)}- a:`).join('\n')}`]) {
          const r = await post('ingestion', '/v1/suites', yaml, 'application/yaml');
          expect(r.status).toBe(422);
          expect(r.json.code).toBe('SUITE_INVALID');
          expect(r.json.details.errors[0]).toMatchObject({ code: 'YAML_UNSUPPORTED', message: 'the document is nested more than 128 levels deep' });
        }
      });
    });

    runHistoryContract(() => ({ post: (app, path, body) => post(app, path, body), get }));

    // Last: every answer of the whole suite, errors included, is free of internal error text.
    describe('no answer carries an internal error message', () => {
      it('scans every answer body of the contract', () => {
        expect(answers.length).toBeGreaterThan(50);
        expect(answers.filter((a) => a.status >= 400).length).toBeGreaterThan(30);
        const leaks = answers.filter((a) => INTERNAL_ERROR_TEXT.test(a.text) || a.status >= 500).map((a) => `${a.at} ${a.status}: ${a.text.slice(0, 300)}`);
        expect(leaks).toEqual([]);
      });
    });

    // X1: a client generated from the document reads every answer the contract got, errors included.
    describe('every answer conforms to the OpenAPI document', () => {
      it('matches the response schema of its operation and status in docs/openapi.json', () => {
        const conformance = new OpenApiConformance(JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../docs/openapi.json'), 'utf8')));
        const problems = answers.flatMap((a) => conformance.check(a.at.split(' ')[0]!, a.at.split(' ')[1]!, a.status, a.text));
        expect(problems).toEqual([]);
        // Held to a schema, not passed over: nearly every answer of the contract is JSON of a declared operation.
        expect(conformance.judged).toBeGreaterThan(answers.length * 0.8);
      });
    });
  });
}
