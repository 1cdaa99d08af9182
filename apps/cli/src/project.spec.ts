import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_INLINE_OUTPUTS } from '@evals/limits';
import { cli, failure, fakeFetch, runView, type Recorded } from './cli.testing';
import { EXIT } from './exit-codes';
import { ApiClient, PROJECT_HEADER, resolveProject } from './http';

/**
 * Issue 30 (docs/adr/0009-projects.md): the CLI acts in one project per command - `--project` (before the
 * command or among its options) beats EVALS_PROJECT - and names it as X-Evals-Project on every request.
 */
const endpoints = { ingestion: 'http://evals.test:3001', read: 'http://evals.test:3003', regression: 'http://evals.test:3004' };
const GOOD = 'examples/support-triage.good.outputs.jsonl';
const SUITE_FILE = 'examples/support-triage.suite.yaml';
const BAD_IDS = ['Team-A', 'team.a', 'team:a', '-team', 'x'.repeat(64), 'team a'];

const projectOf = (calls: readonly Recorded[]) => calls.map((c) => c.headers[PROJECT_HEADER]);
const noPins = () => fakeFetch((r) => (r.method === 'GET' && r.url.includes('/v1/baselines') ? { status: 200, json: { pins: [] } } : undefined));

describe('unit: the project of a command (issue 30)', () => {
  it('--project beats EVALS_PROJECT; neither is no project (the key decides, else default)', () => {
    expect(resolveProject({}, {})).toBeUndefined();
    expect(resolveProject({}, { EVALS_PROJECT: '  ' })).toBeUndefined();
    expect(resolveProject({}, { EVALS_PROJECT: 'team-b' })).toBe('team-b');
    expect(resolveProject({ project: 'team-a' }, { EVALS_PROJECT: 'team-b' })).toBe('team-a');
    expect(resolveProject({ project: 'default' }, { EVALS_PROJECT: 'team-b' })).toBe('default');
  });

  it.each(BAD_IDS)('refuses %p as a project id with exit 2, naming where it came from', async (bad) => {
    const flag = await failure(Promise.resolve().then(() => resolveProject({ project: bad }, { EVALS_PROJECT: 'team-b' })));
    expect(flag.exitCode).toBe(EXIT.USAGE);
    expect(flag.message).toMatch(/^--project is not a project id/);
    const env = await failure(Promise.resolve().then(() => resolveProject({}, { EVALS_PROJECT: bad })));
    expect(env.exitCode).toBe(EXIT.USAGE);
    expect(env.message).toMatch(/^EVALS_PROJECT is not a project id/);
  });

  it('the client sends X-Evals-Project only when a project is given', async () => {
    const named = fakeFetch(() => ({ status: 200, json: {} }));
    await new ApiClient(endpoints, { timeoutMs: 1000, fetch: named.fetch, project: 'team-a' }).get(`${endpoints.read}/v1/scorecards`);
    await new ApiClient(endpoints, { timeoutMs: 1000, fetch: named.fetch, project: 'team-a' }).post(`${endpoints.ingestion}/v1/runs`, { json: {} });
    expect(projectOf(named.calls)).toEqual(['team-a', 'team-a']);
    const plain = fakeFetch(() => ({ status: 200, json: {} }));
    await new ApiClient(endpoints, { timeoutMs: 1000, fetch: plain.fetch }).get(`${endpoints.read}/v1/scorecards`);
    expect(plain.calls[0].headers).not.toHaveProperty(PROJECT_HEADER);
  });

  it('evals --project before the command, EVALS_PROJECT and the command\'s own --project: the nearest wins', async () => {
    const none = noPins();
    expect((await cli(['baseline', 'list'], { fetch: none.fetch })).code).toBe(0);
    const env = noPins();
    expect((await cli(['baseline', 'list'], { fetch: env.fetch, env: { EVALS_PROJECT: 'team-e' } })).code).toBe(0);
    const global = noPins();
    expect((await cli(['--project', 'team-g', 'baseline', 'list'], { fetch: global.fetch, env: { EVALS_PROJECT: 'team-e' } })).code).toBe(0);
    const equals = noPins();
    expect((await cli(['--project=team-q', 'baseline', 'list'], { fetch: equals.fetch })).code).toBe(0);
    const own = noPins();
    expect((await cli(['--project', 'team-g', 'baseline', 'list', '--project', 'team-c'], { fetch: own.fetch, env: { EVALS_PROJECT: 'team-e' } })).code).toBe(0);
    expect([none, env, global, equals, own].map((f) => projectOf(f.calls))).toEqual([[undefined], ['team-e'], ['team-g'], ['team-q'], ['team-c']]);
  });

  it('a bad project id anywhere is a usage error (exit 2) and nothing is sent', async () => {
    for (const bad of BAD_IDS) {
      const sent = noPins();
      const attempts = [
        await cli(['--project', bad, 'baseline', 'list'], { fetch: sent.fetch }),
        // `=`: a value starting with a dash would otherwise be taken for an option (a usage error all the same).
        await cli(['baseline', 'list', `--project=${bad}`], { fetch: sent.fetch }),
        await cli(['baseline', 'list'], { fetch: sent.fetch, env: { EVALS_PROJECT: bad } }),
      ];
      expect(attempts.map((a) => a.code)).toEqual([EXIT.USAGE, EXIT.USAGE, EXIT.USAGE]);
      expect(attempts.map((a) => /not a project id/.test(a.err))).toEqual([true, true, true]);
      expect(sent.calls).toEqual([]);
    }
    const missing = await cli(['baseline', 'list', '--project'], { fetch: noPins().fetch });
    expect(missing.code).toBe(EXIT.USAGE);
    const bare = await cli(['--project'], { fetch: noPins().fetch });
    expect(bare.code).toBe(EXIT.USAGE);
  });

  it('every request of a command carries it: the suite push, the run and the read model\'s cases', async () => {
    const api = fakeFetch((r) => {
      if (r.method === 'POST' && r.url.endsWith('/v1/suites')) return { status: 201, json: { created: true, suite: { suite_key: 'support-triage', version: 3, case_count: 12, content_hash: 'h' } } };
      if (r.method === 'POST' && r.url.endsWith('/v1/runs')) return { status: 200, json: runView({ run_id: 'p-1', n: 4, passed: 4 }) };
      if (r.method === 'GET' && r.url.includes('/v1/runs/p-1')) return { status: 200, json: { cases: [] } };
      return undefined;
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-project-'));
    try {
      const r = await cli(['--project', 'team-a', 'run', '--suite', SUITE_FILE, '--outputs', GOOD, '--subject-id', 'bot', '--run-id', 'p-1', '--junit', path.join(dir, 'j.xml')], { fetch: api.fetch });
      expect(r.err).not.toContain('not a project id');
      expect(api.calls.map((c) => `${c.method} ${new URL(c.url).pathname}`)).toEqual(['POST /v1/suites', 'POST /v1/runs', 'GET /v1/runs/p-1']);
      expect(projectOf(api.calls)).toEqual(['team-a', 'team-a', 'team-a']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a streamed run (above the inline cap) names it on the open, every batch and the seal', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-project-'));
    try {
      const many = path.join(dir, 'many.jsonl');
      fs.writeFileSync(many, Array.from({ length: MAX_INLINE_OUTPUTS + 1 }, (_, i) => JSON.stringify({ case_id: `c${i}`, output: 'x' })).join('\n'));
      const api = fakeFetch((r) => {
        if (r.method === 'POST' && r.url.endsWith('/v1/streamed-runs')) return { status: 200, json: { run_id: 'big-p', case_count: MAX_INLINE_OUTPUTS + 1, created: true, phase: 'open' } };
        if (r.method === 'POST' && r.url.endsWith('/outputs')) return { status: 200, json: { run_id: 'big-p', accepted: 1 } };
        if (r.method === 'POST' && r.url.endsWith('/seal')) return { status: 200, json: runView({ run_id: 'big-p', n: 1, passed: 1 }) };
        return undefined;
      });
      const r = await cli(['run', '--suite', 's', '--outputs', many, '--subject-id', 'bot', '--run-id', 'big-p', '--json'], { fetch: api.fetch, env: { EVALS_PROJECT: 'team-s' } });
      expect(r.code).toBe(0);
      const posts = api.calls.filter((c) => c.method === 'POST');
      expect(posts.filter((c) => c.url.endsWith('/outputs')).length).toBeGreaterThan(1);
      expect(posts.at(-1)!.url).toMatch(/\/seal$/);
      expect(new Set(projectOf(api.calls))).toEqual(new Set(['team-s']));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--help names the flag and the variable', async () => {
    expect((await cli(['--help'])).out).toMatch(/EVALS_PROJECT/);
    expect((await cli(['gate', '--help'])).out).toMatch(/--project ID .*X-Evals-Project/);
  });

  it('evals project create posts {id, name} to the ingestion API; a bad id is exit 2 and nothing is sent; a taken one is exit 2', async () => {
    const api = fakeFetch((r) => {
      if (r.method !== 'POST' || !r.url.endsWith('/v1/projects')) return undefined;
      const body = JSON.parse(r.body ?? '{}') as { id: string; name: string };
      return body.id === 'taken' ? { status: 409, json: { code: 'PROJECT_ID_TAKEN', message: 'a project taken exists', field: 'id' } } : { status: 201, json: { project: { ...body, created_at: '2026-12-04T00:00:00.000Z', created_by: null } } };
    });
    const created = await cli(['project', 'create', 'team-a', '--name', 'Team A'], { fetch: api.fetch });
    expect(created.code).toBe(0);
    expect(created.out).toContain('created project team-a');
    expect(api.calls.map((c) => [c.url, JSON.parse(c.body ?? '{}')])).toEqual([['http://evals.test:3001/v1/projects', { id: 'team-a', name: 'Team A' }]]);
    // The name defaults to the id; the global --project is only a header here (the new project is the argument).
    await cli(['--project', 'default', 'project', 'create', 'team-b'], { fetch: api.fetch });
    expect(JSON.parse(api.calls[1].body ?? '{}')).toEqual({ id: 'team-b', name: 'team-b' });
    expect(api.calls[1].headers[PROJECT_HEADER]).toBe('default');
    const taken = await cli(['project', 'create', 'taken'], { fetch: api.fetch });
    expect(taken.code).toBe(EXIT.USAGE);
    expect(taken.err).toContain('PROJECT_ID_TAKEN');
    const sent = api.calls.length;
    const bad = await cli(['project', 'create', 'Team_A'], { fetch: api.fetch });
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.err).toContain('project ID is not a project id');
    expect(api.calls).toHaveLength(sent);
  });

  it('evals project list shows the projects the key may act in', async () => {
    const api = fakeFetch((r) =>
      r.method === 'GET' && r.url.endsWith('/v1/projects')
        ? { status: 200, json: { projects: [{ id: 'default', name: 'Default', created_at: '2026-12-01T00:00:00.000Z', created_by: null }, { id: 'team-a', name: 'Team A', created_at: '2026-12-04T00:00:00.000Z', created_by: null }] } }
        : undefined,
    );
    const r = await cli(['project', 'list'], { fetch: api.fetch, env: { EVALS_PROJECT: 'team-a' } });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/default\s+Default/);
    expect(r.out).toMatch(/team-a\s+Team A/);
    expect(projectOf(api.calls)).toEqual(['team-a']);
  });
});
