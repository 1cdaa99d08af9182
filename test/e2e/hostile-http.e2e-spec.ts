import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { renderAsyncApiJson } from '@evals/contracts';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';
import {
  damage,
  fuzzSeed,
  hostileKey,
  hostileString,
  mutations,
  applyMutations,
  OUTPUT_CANARY,
  oversizeOutput,
  render,
  rssOf,
  Tally,
  wireDamage,
} from '../support/hostile-inputs';

/**
 * Issue 18 part 3, the HTTP edge: fast-check generates requests for every route `evals serve` maps (read from
 * its own /openapi.json): hostile path parameters and query strings, and bodies derived from a valid one per
 * route - wrong types, extra and missing fields, prototype keys, deep and huge values, NUL, lone surrogates,
 * invalid UTF-8, oversize outputs, broken JSON and YAML, over the body limit. Every answer is below 500, every
 * refusal a JSON body with a code, no answer echoes an output (D1), the process survives and its memory
 * stays bounded. Replay a failure with FUZZ_SEED=<the printed seed>; FUZZ_HTTP_REQUESTS sets the count.
 */
jest.setTimeout(300_000);

const REQUESTS = Number(process.env['FUZZ_HTTP_REQUESTS'] ?? 2_500);
const CONCURRENCY = 6;
const SUITE = 'fuzz-suite';
const RUN = 'fuzz-run-1';
const outputs = [
  { case_id: 'c0', output: `${OUTPUT_CANARY} yes` },
  { case_id: 'c1', output: 'no' },
];

/** A valid body per route (docs/*.md); the fuzzer mutates it. Routes not listed start from `{}`. */
const BASES: Record<string, unknown> = {
  'POST /v1/suites': {
    key: SUITE,
    description: 'hostile-input campaign',
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    cases: [
      { id: 'c0', input: 'question 0', expected: 'yes' },
      { id: 'c1', input: 'question 1', expected: 'yes' },
    ],
  },
  'POST /v1/runs': { run_id: RUN, suite_key: SUITE, subject_kind: 'agent', subject_id: 'fuzz-bot', source: 'ci', outputs },
  'POST /v1/gate': { suite_key: SUITE, subject_kind: 'agent', subject_id: 'fuzz-gate', outputs },
  'POST /v1/gate/{id}/override': { reason: 'accepted by the on-call lead after review' },
  'POST /v1/keys': { name: 'fuzz', tier: 'viewer', project: 'default' },
  // Issue 30: project ids in bodies (and, from the document, in /v1/projects/{id}).
  'POST /v1/projects': { id: 'fuzz-project', name: 'hostile-input campaign' },
  'POST /v1/baselines': { suite_key: SUITE, subject_kind: 'agent', subject_id: 'fuzz-bot', run_id: RUN },
  'POST /v1/comparisons': { run_a: RUN, run_b: RUN, outputs_a: outputs, outputs_b: outputs, rubric: 'Answers the question.' },
  'POST /v1/calibration-sets': {
    name: 'fuzz',
    rubric: 'Answers the question.',
    items: [{ item_id: 'i1', output_hash: 'a'.repeat(64), human_verdict: 'pass', output_chars: 3 }],
  },
  'POST /v1/calibrations': { set_id: '00000000-0000-4000-8000-000000000000', outputs: [{ item_id: 'i1', output: OUTPUT_CANARY }] },
};

/** A complete suite in YAML whose first case has this input and expected value (YAML double-quoted escapes). */
function yamlSuite(input: string, expected: string): string {
  return `key: ${SUITE}\ndefault_scorer: {type: exact}\npass_threshold: 0.5\nregression_threshold: 0.1\ncases:\n  - id: c0\n    input: ${input}\n    expected: ${expected}\n`;
}

/** YAML a suite push may carry: deep flow collections, an alias bomb, tabs, NUL, a lone surrogate. */
const HOSTILE_YAML: readonly string[] = [
  '['.repeat(50_000),
  `${'- '.repeat(5_000)}x`,
  'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n',
  `key: ${SUITE}\ncases:\n\t- id: x\n`,
  yamlSuite('"a\\0b"', '"yes"'),
  yamlSuite('"\\ud800"', '"yes"'),
  yamlSuite('"question"', '"\\0"'),
  yamlSuite('"question"', '"\\udfff"'),
  '!!js/function "function(){}"',
  '__proto__: {polluted: true}\n',
  '? [a, b]\n: c\n',
  '',
];

interface Route {
  readonly method: string;
  readonly path: string;
  readonly query: readonly string[];
}

interface Request {
  readonly route: Route;
  readonly url: string;
  readonly contentType: string | null;
  readonly body: Buffer | null;
  readonly what: string;
}

/** A path segment from a hostile string: percent-encoded byte by byte, lone surrogates as their (invalid) UTF-8 bytes. */
function segment(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (/^[A-Za-z0-9._~-]$/.test(ch)) out += ch;
    else if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    else out += [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');
  }
  return out === '' ? '%20' : out;
}

const pathValue: fc.Arbitrary<string> = fc.oneof(
  hostileString.map(segment),
  fc.constantFrom('..', '.', '%2e%2e', '%2F', '%00', '%ED%A0%80', '%FF', '%', '%zz', RUN, 'a'.repeat(3_000), '00000000-0000-4000-8000-000000000000', '-1', '0', '99999999999999999999'),
);

function requestFor(route: Route): fc.Arbitrary<Request> {
  const key = `${route.method} ${route.path}`;
  const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const pathArb = fc.tuple(...params.map(() => pathValue)).map((values) => {
    let p = route.path;
    params.forEach((name, i) => (p = p.replace(`{${name}}`, values[i]!)));
    return p;
  });
  const queryArb = fc
    .array(fc.tuple(fc.oneof(route.query.length > 0 ? fc.constantFrom(...route.query) : hostileKey, hostileKey), fc.oneof(hostileString, pathValue)), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => `${segment(k)}=${v.startsWith('%') || /^[A-Za-z0-9._~-]*$/.test(v) ? v : segment(v)}`).join('&'));
  const hasBody = route.method !== 'GET' && route.method !== 'HEAD';
  const base = BASES[key] ?? {};
  const stringFields = key === 'POST /v1/runs' || key === 'POST /v1/gate' ? ['outputs'] : [];
  const json = fc
    .record({ m: mutations(Object.keys(base as object)), wire: wireDamage, oversize: fc.oneof({ weight: 30, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: oversizeOutput }) })
    .map(({ m, wire, oversize }) => {
      let value = applyMutations(base, m);
      // An output over 512 KiB inside an otherwise valid body (OUTPUT_TOO_LARGE), or over the 1 MB body limit.
      if (oversize !== null && stringFields.length > 0 && typeof value === 'object' && value !== null) value = { ...value, outputs: [{ case_id: 'c0', output: oversize }] };
      return { contentType: 'application/json', body: damage(render(value), wire), what: `json ${m.map((x) => x.op).join('+')} wire=${wire.op}` };
    });
  const other = fc.oneof(
    fc.constantFrom(...HOSTILE_YAML).map((y) => ({ contentType: 'application/yaml', body: Buffer.from(y, 'utf8'), what: 'yaml' })),
    fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', 'application/octet-stream').map((ct) => ({
      contentType: ct,
      body: render(base),
      what: `content-type ${ct}`,
    })),
    fc.constant({ contentType: 'application/json', body: Buffer.alloc(1024 * 1024 + 10, 0x20), what: 'over the body limit' }),
    // Issue 16: a body nested 100 000 deep, as a whole or inside the valid body.
    fc.constantFrom('{"a":', '[').map((open) => ({
      contentType: 'application/json',
      body: Buffer.from(open.repeat(100_000) + (open === '[' ? '' : '1') + (open === '[' ? ']' : '}').repeat(100_000)),
      what: `nested 100000 deep (${open})`,
    })),
    fc.constantFrom(...(Object.keys(base as object).length > 0 ? Object.keys(base as object) : ['x'])).map((field) => ({
      contentType: 'application/json',
      body: render({ ...(base as object), [field]: { splice: true } }).toString('utf8').replace('{"splice":true}', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`),
      what: `${field} nested 100000 deep`,
    })).map((b) => ({ ...b, body: Buffer.from(b.body) })),
    fc.constant({ contentType: null as string | null, body: null as Buffer | null, what: 'no body' }),
  );
  const bodyArb = hasBody ? fc.oneof({ weight: 12, arbitrary: json }, { weight: 2, arbitrary: other }) : fc.constant({ contentType: null as string | null, body: null as Buffer | null, what: 'query' });
  return fc.record({ p: pathArb, q: queryArb, b: bodyArb }).map(({ p, q, b }) => ({
    route,
    url: q === '' ? p : `${p}?${q}`,
    contentType: b.contentType,
    body: b.body,
    what: b.what,
  }));
}

function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return `${(error as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`;
}

function isSocketReset(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

describe('hostile HTTP requests for every route of evals serve (issue 18, issue 16, D1)', () => {
  let dir: string;
  let serve: EmbeddedServe;
  let routes: Route[] = [];
  const seed = fuzzSeed();
  const tally = new Tally();
  const serverErrors: string[] = [];
  const perRoute = new Map<string, number>();
  const msPerRoute = new Map<string, number>();

  async function send(r: Request): Promise<{ status: number; text: string; contentType: string }> {
    const headers: Record<string, string> = {};
    if (r.contentType !== null) headers['content-type'] = r.contentType;
    const res = await fetch(`${serve.url}${r.url}`, { method: r.route.method, headers, ...(r.body !== null ? { body: r.body } : {}), signal: AbortSignal.timeout(60_000) });
    const contentType = res.headers.get('content-type') ?? '';
    // A live event stream would never end: its status and headers are the answer.
    if (contentType.startsWith('text/event-stream')) {
      await res.body?.cancel();
      return { status: res.status, text: '', contentType };
    }
    return { status: res.status, text: await res.text(), contentType };
  }

  /** Sends one request; null when it was answered as it must be, else what went wrong. */
  async function exercise(r: Request): Promise<string | null> {
    tally.tried++;
    const label = `${r.route.method} ${r.route.path}`;
    const where = `${r.route.method} ${r.url.slice(0, 300)} [${r.url.length} chars] (${r.what})`;
    perRoute.set(label, (perRoute.get(label) ?? 0) + 1);
    let answer: Awaited<ReturnType<typeof send>>;
    const started = Date.now();
    try {
      answer = await send(r);
    } catch (error) {
      // A keep-alive connection the server closed as it idled can race a new request on it: the request is
      // tried once more on a fresh connection. A request that itself breaks the connection breaks it again.
      if (!isSocketReset(error)) {
        tally.crashes++;
        return `${where} got no answer: ${describeError(error)}`;
      }
      try {
        answer = await send(r);
      } catch (again) {
        tally.crashes++;
        return `${where} got no answer, twice: ${describeError(again)}`;
      }
    }
    msPerRoute.set(label, (msPerRoute.get(label) ?? 0) + Date.now() - started);
    if (answer.text.includes(OUTPUT_CANARY)) return `${where}: the answer echoes an output (D1)`;
    if (answer.status >= 500) {
      tally.serverErrors++;
      serverErrors.push(`${answer.status} ${where}: ${answer.text.slice(0, 200)}`);
      return null;
    }
    if (answer.status < 400) {
      tally.accepted++;
      return null;
    }
    let code: unknown;
    try {
      code = (JSON.parse(answer.text) as { code?: unknown }).code;
    } catch {
      code = undefined;
    }
    if (typeof code !== 'string' || !/^[A-Z][A-Z0-9_]+$/.test(code)) return `${where}: ${answer.status} without a code: ${answer.text.slice(0, 300)}`;
    tally.refuse(`${answer.status} ${code}`);
    return null;
  }

  beforeAll(async () => {
    console.log(`hostile HTTP: seed ${seed} (replay: FUZZ_SEED=${seed})`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-hostile-http-'));
    // A 1 MB body limit, as the HTTP contract suite uses, so over-the-limit bodies stay small.
    serve = await startEmbeddedServe({ dataDir: path.join(dir, 'data'), env: { HTTP_BODY_LIMIT_MB: '1', LOG_LEVEL: 'error' } });
    const json = (await (await fetch(`${serve.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>> };
    for (const [p, ops] of Object.entries(json.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        routes.push({ method: method.toUpperCase(), path: p, query: (op.parameters ?? []).filter((x) => x.in === 'query').map((x) => x.name) });
      }
    }
    routes = routes.sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));
    // The valid suite and run the bodies start from, so a mutation that stays valid reaches the service's logic.
    const pushed = await send({ route: { method: 'POST', path: '/v1/suites', query: [] }, url: '/v1/suites', contentType: 'application/json', body: render(BASES['POST /v1/suites']), what: 'setup' });
    expect(pushed.status).toBe(201);
    const ran = await send({ route: { method: 'POST', path: '/v1/runs', query: [] }, url: '/v1/runs', contentType: 'application/json', body: render(BASES['POST /v1/runs']), what: 'setup' });
    expect([200, 202]).toContain(ran.status);
  }, 180_000);

  afterAll(async () => {
    console.log(`hostile HTTP: ${tally.summary()}`);
    if (serve) await serve.stop('SIGTERM');
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('serves the bus contract at /asyncapi.json (issue 16), the document docs/asyncapi.json holds', async () => {
    const res = await fetch(`${serve.url}/asyncapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(renderAsyncApiJson()));
  });

  // Issue 30 (docs/adr/0009-projects.md): with access control off, X-Evals-Project names the request's project.
  // A malformed id is refused 400 naming the header, a well-formed one that does not exist 404
  // PROJECT_NOT_FOUND, on every route that reads or writes project data; the public ones ignore it.
  it('hostile X-Evals-Project headers on every route: 400 naming the header, an unknown project 404 PROJECT_NOT_FOUND, never a 5xx (issue 30)', async () => {
    const malformed = ['x'.repeat(64), 'x'.repeat(5_000), 'Team-A', 'DEFAULT', '..', '.', '../default', 'a:b', 'default:x', 'ünï', 'a.b', '-lead', 'a/b', 'a b', '%2e%2e', '*', '>', 'default,other'];
    const unknown = ['no-such-project', 'x'.repeat(63)];
    const problems: string[] = [];
    const publicPaths = ['/health', '/metrics', '/openapi.json', '/docs', '/asyncapi.json'];
    for (const route of routes) {
      const path = route.path.replace(/\{[^}]+\}/g, 'fuzz-probe');
      const body = route.method === 'GET' ? undefined : render(BASES[`${route.method} ${route.path}`] ?? {});
      for (const value of [...malformed, ...unknown]) {
        const res = await fetch(`${serve.url}${path}`, { method: route.method, headers: { 'x-evals-project': value, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body } : {}) });
        const text = await res.text();
        let json: { code?: string; field?: string } = {};
        try {
          json = JSON.parse(text) as typeof json;
        } catch {
          // the dashboard shell, metrics: not JSON
        }
        const where = `${route.method} ${route.path} with X-Evals-Project ${JSON.stringify(value.slice(0, 40))}`;
        if (res.status >= 500) problems.push(`${where}: ${res.status} ${text.slice(0, 200)}`);
        else if (publicPaths.includes(route.path)) continue;
        else if (malformed.includes(value) && !(res.status === 400 && json.code === 'INVALID_REQUEST' && json.field === 'X-Evals-Project')) problems.push(`${where}: ${res.status} ${text.slice(0, 200)}`);
        else if (unknown.includes(value) && !(res.status === 404 && json.code === 'PROJECT_NOT_FOUND')) problems.push(`${where}: ${res.status} ${text.slice(0, 200)}`);
      }
    }
    expect(problems).toEqual([]);
    // Sent twice, the header is refused as ambiguous rather than either value picked.
    const twice = await fetch(`${serve.url}/v1/suites`, { headers: [['x-evals-project', 'default'], ['x-evals-project', 'other']] });
    expect([twice.status, ((await twice.json()) as { code?: string }).code]).toEqual([400, 'INVALID_REQUEST']);
    // The default project, named or not, is served as before.
    for (const headers of [{}, { 'x-evals-project': 'default' }, { 'x-evals-project': '' }] as Array<Record<string, string>>) expect((await fetch(`${serve.url}/v1/suites`, { headers })).status).toBe(200);
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
  });

  it(`${REQUESTS} generated requests: every answer below 500, every refusal with a code, the process alive and bounded`, async () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(['POST /v1/runs', 'POST /v1/suites', 'POST /v1/gate']));
    const before = rssOf(serve.child.pid!);
    // Sampled up front from the seed, then sent by a few concurrent clients: request i is the same for the same
    // seed whatever the timing, and FUZZ_ONLY=i replays just that one.
    const samples = fc.sample(fc.constantFrom(...routes).chain(requestFor), { seed, numRuns: REQUESTS });
    const only = process.env['FUZZ_ONLY'];
    const indices = only !== undefined && only !== '' ? [Number(only)] : samples.map((_, i) => i);
    const problems: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < indices.length) {
        const i = indices[next++]!;
        const problem = await exercise(samples[i]!);
        if (problem !== null) problems.push(`#${i} (FUZZ_SEED=${seed} FUZZ_ONLY=${i}): ${problem}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const after = rssOf(serve.child.pid!);
    console.log(`hostile HTTP: evals serve RSS ${(before / 2 ** 20).toFixed(0)} MiB before, ${(after / 2 ** 20).toFixed(0)} MiB after; requests per route: ${JSON.stringify(Object.fromEntries(perRoute))}; ms per route: ${JSON.stringify(Object.fromEntries(msPerRoute))}`);
    // Every route was exercised, and the server is still up and answering.
    for (const r of routes) expect(perRoute.get(`${r.method} ${r.path}`) ?? 0).toBeGreaterThan(0);
    expect(serve.child.exitCode).toBeNull();
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
    expect(after - before).toBeLessThan(256 * 2 ** 20);
    expect({ problems, serverErrors }).toEqual({ problems: [], serverErrors: [] });
  });
});
