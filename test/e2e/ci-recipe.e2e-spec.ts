import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { closedPort, parseJunit } from '../../apps/cli/src/e2e.testing';

/**
 * Issue 29 part 4: the CI recipe (docs/ci.md). The two workflow files of examples/ci/ are parsed, and the
 * shell commands of their evals steps (GitHub: the `run` steps that call evals or gh; GitLab: each job's
 * `script` and `after_script`) run in bash - not the runner - on fresh temporary folders holding the
 * repository's examples, with the variables GitHub or GitLab would set, `npx evals` resolved to this
 * checkout's bin/evals.js, and `gh` / `curl` recorded by stand-ins. What a runner does around them is
 * played as little as the recipe needs: a step's or job's condition (`if:`, `rules:`), the `${{ }}`
 * expressions, and the cache saved by one run and restored into the next one's fresh folder - so a gate
 * finds its baseline only if the cache carries the data directory. On the embedded default: a main run
 * records and pins the baseline, a pull request's regressed outputs fail the gate (exit 1), good ones pass
 * (exit 0), the JUnit report and the Markdown summary are where the recipe uploads and posts them; the
 * server variant reaches the server it names.
 */
const root = path.resolve(__dirname, '../..');
const SUITE_CASES = 11; // examples/support-triage.suite.yaml
const REGRESSED_FAILURES = 9; // examples/support-triage.regressed.outputs.jsonl fails 9 of the 11 cases

let tmp: string;
let shims: string;
let callLog: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-ci-recipe-'));
  shims = path.join(tmp, 'bin');
  callLog = path.join(tmp, 'calls.jsonl');
  fs.mkdirSync(shims);
  const evals = path.join(root, 'bin', 'evals.js');
  const shim = (name: string, body: string) => fs.writeFileSync(path.join(shims, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  // `npx evals` after `npm ci` is this checkout's CLI; any other npx use is a mistake of the recipe.
  shim('npx', `if [ "$1" = "--no-install" ]; then shift; fi\nif [ "$1" != "evals" ]; then echo "npx stand-in: the recipe should only run 'npx evals', got: $*" >&2; exit 127; fi\nshift\nexec '${process.execPath}' '${evals}' "$@"`);
  shim('evals', `exec '${process.execPath}' '${evals}' "$@"`);
  // gh and curl: record the call and the body file's content, never reach a network.
  const recorder = (tool: string, bodyFrom: string) =>
    `exec '${process.execPath}' -e '
const fs = require("fs"); const args = process.argv.slice(1);
${bodyFrom}
fs.appendFileSync(${JSON.stringify(callLog)}, JSON.stringify({ tool: "${tool}", args, body, env: { GH_TOKEN: process.env.GH_TOKEN, GH_REPO: process.env.GH_REPO } }) + "\\n");
' -- "$@"`;
  shim('gh', recorder('gh', 'const i = args.indexOf("--body-file"); const body = i >= 0 ? fs.readFileSync(args[i + 1], "utf8") : null;'));
  shim('curl', recorder('curl', 'const d = args.find((a, i) => args[i - 1] === "--data-urlencode" && a.startsWith("body@")); const body = d ? fs.readFileSync(d.slice(5), "utf8") : null;'));
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function calls(): Array<{ tool: string; args: string[]; body: string | null; env: Record<string, string | undefined> }> {
  return fs.existsSync(callLog) ? fs.readFileSync(callLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

/** A fresh checkout: the repository's examples, and the outputs the agent would have written. */
function workspace(name: string, outputsPath: string, outputs: 'good' | 'regressed'): string {
  const ws = path.join(tmp, name);
  fs.mkdirSync(ws);
  fs.cpSync(path.join(root, 'examples'), path.join(ws, 'examples'), { recursive: true });
  fs.copyFileSync(path.join(root, 'examples', `support-triage.${outputs}.outputs.jsonl`), path.resolve(ws, outputsPath));
  return ws;
}

interface Shell {
  code: number | null;
  stdout: string;
  stderr: string;
}

function bash(script: string, cwd: string, env: Record<string, string>): Promise<Shell> {
  const file = path.join(tmp, `script-${process.hrtime.bigint()}.sh`);
  fs.writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', file], {
      cwd,
      env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: path.join(tmp, 'home'), LANG: 'C.UTF-8', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const invokesEvals = (script: string) => /(^|[\s;&|(])(npx\s+(--no-install\s+)?)?evals\s/m.test(script);
const invokesGh = (script: string) => /(^|[\s;&|(])gh\s/m.test(script);

/** The cache both runners keep between runs: key -> a copy of the cached paths, newest last. */
class CacheStore {
  readonly entries: Array<{ key: string; dir: string; paths: string[] }> = [];
  private n = 0;
  save(key: string, ws: string, paths: string[]): string {
    const dir = path.join(tmp, `cache-${++this.n}`);
    for (const p of paths) {
      const from = path.resolve(ws, p);
      if (!fs.existsSync(from)) throw new Error(`the cache path ${p} does not exist in the workspace: nothing would be cached`);
      fs.cpSync(from, path.join(dir, path.relative(ws, from)), { recursive: true });
    }
    this.entries.push({ key, dir, paths });
    return dir;
  }
  restore(keys: string[], exactOnly: boolean, ws: string): string | null {
    const hit =
      this.entries.find((e) => e.key === keys[0]) ??
      (exactOnly ? undefined : keys.slice(1).map((prefix) => [...this.entries].reverse().find((e) => e.key.startsWith(prefix))).find(Boolean));
    if (!hit) return null;
    fs.cpSync(hit.dir, ws, { recursive: true });
    return hit.key;
  }
}

// ---------------------------------------------------------------------------------------------------------
// GitHub Actions: the expressions (`${{ }}` and `if:`) the recipe uses, evaluated as the runner would.

type Value = string | number | boolean | null | Record<string, unknown>;

interface GithubContext {
  github: Record<string, unknown>;
  vars: Record<string, string>;
  secrets: Record<string, string>;
  env: Record<string, string>;
  runner: Record<string, string>;
  steps: Record<string, { outcome: string; conclusion: string }>;
  jobFailed: boolean;
}

function evaluate(expression: string, ctx: GithubContext): Value {
  const tokens = expression.match(/\s+|'(?:[^']|'')*'|==|!=|&&|\|\||[!()]|[A-Za-z_][\w.-]*|\d+(?:\.\d+)?|\S/g)!.filter((t) => !/^\s+$/.test(t));
  let i = 0;
  const peek = () => tokens[i];
  const take = (want?: string) => {
    const t = tokens[i++];
    if (want !== undefined && t !== want) throw new Error(`expression ${expression}: expected ${want}, got ${t}`);
    return t;
  };
  const lookup = (name: string): Value => {
    const [head, ...rest] = name.split('.');
    if (head === 'vars' || head === 'secrets') return rest.length === 1 ? (ctx[head][rest[0]!] ?? null) : fail(`${name}: one name after ${head}`);
    if (head === 'steps') {
      const step = ctx.steps[rest[0]!];
      if (!step) return fail(`${name}: no step with id ${rest[0]} before this one`);
      return (step as Record<string, string>)[rest[1]!] ?? fail(`${name}: a step has outcome and conclusion`);
    }
    const base = ({ github: ctx.github, env: ctx.env, runner: ctx.runner } as Record<string, unknown>)[head!];
    if (base === undefined) return fail(`${name}: unknown context ${head}`);
    let value: unknown = base;
    for (const key of rest) {
      if (value === null || typeof value !== 'object' || !(key in (value as object))) return fail(`${name}: the test's ${head} context has no ${key} (a typo in the workflow, or a context the test should add)`);
      value = (value as Record<string, unknown>)[key];
    }
    return value as Value;
  };
  const fail = (message: string): never => {
    throw new Error(`expression ${expression}: ${message}`);
  };
  const primary = (): Value => {
    const t = take();
    if (t === undefined) return fail('unexpected end');
    if (t === '(') {
      const v = or();
      take(')');
      return v;
    }
    if (t.startsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
    if (/^\d/.test(t)) return Number(t);
    if (t === 'true' || t === 'false') return t === 'true';
    if (t === 'null') return null;
    if (peek() === '(') {
      take('(');
      take(')');
      const status: Record<string, boolean> = { success: !ctx.jobFailed, failure: ctx.jobFailed, always: true, cancelled: false };
      return t in status ? status[t]! : fail(`unknown function ${t}()`);
    }
    return lookup(t);
  };
  const num = (v: Value) => (v === null ? 0 : typeof v === 'boolean' ? Number(v) : typeof v === 'number' ? v : typeof v === 'string' ? (v.trim() === '' ? 0 : Number(v)) : NaN);
  const equal = (a: Value, b: Value) => (typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : typeof a === typeof b && typeof a === 'object' ? a === b : num(a) === num(b));
  const truthy = (v: Value) => !(v === null || v === false || v === 0 || v === '' || Number.isNaN(v));
  const compare = (): Value => {
    const a = primary();
    if (peek() === '==' || peek() === '!=') {
      const op = take();
      const b = primary();
      return op === '==' ? equal(a, b) : !equal(a, b);
    }
    return a;
  };
  const unary = (): Value => (peek() === '!' ? (take(), !truthy(unary())) : compare());
  // a && b is a when a is falsy, else b; a || b is a when a is truthy, else b.
  const chain = (op: string, next: () => Value, keepLeft: (v: Value) => boolean) => (): Value => {
    let v = next();
    while (peek() === op) {
      take();
      const r = next();
      v = keepLeft(v) ? v : r;
    }
    return v;
  };
  const and = chain('&&', unary, (v) => !truthy(v));
  function or(): Value {
    return chain('||', and, truthy)();
  }
  const value = or();
  if (i !== tokens.length) fail(`unexpected ${tokens[i]}`);
  return value;
}

function substitute(text: string, ctx: GithubContext): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expr: string) => {
    const v = evaluate(expr.trim(), ctx);
    return v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
}

function condition(raw: unknown, ctx: GithubContext): boolean {
  if (raw === undefined) return !ctx.jobFailed;
  const text = String(raw).trim().replace(/^\$\{\{([\s\S]*)\}\}$/, '$1').trim();
  const v = evaluate(/\b(success|failure|always|cancelled)\(\)/.test(text) ? text : `success() && (${text})`, ctx);
  return !(v === null || v === false || v === 0 || v === '');
}

interface StepResult {
  name: string;
  id?: string;
  ran: 'shell' | 'action' | 'skipped' | 'not-evals';
  outcome: 'success' | 'failure' | 'skipped';
  shell?: Shell;
  summary?: string;
  action?: { uses: string; with: Record<string, string>; restored?: string | null; savedDir?: string };
}

interface GithubEvent {
  name: 'push' | 'pull_request';
  ref: string;
  sha: string;
  runId: number;
  pr?: number;
  vars?: Record<string, string>;
  secrets?: Record<string, string>;
}

async function runGithubJob(ws: string, event: GithubEvent, cache: CacheStore): Promise<StepResult[]> {
  const workflow = parse(fs.readFileSync(path.join(root, 'examples/ci/github-actions.yml'), 'utf8'));
  const [job] = Object.values(workflow.jobs) as any[];
  const ctx: GithubContext = {
    github: {
      event_name: event.name,
      ref: event.ref,
      sha: event.sha,
      run_id: String(event.runId),
      run_attempt: '1',
      repository: 'acme/support-bot',
      token: 'ghs_test_token',
      workspace: ws,
      event: event.pr !== undefined ? { pull_request: { number: event.pr } } : {},
    },
    vars: event.vars ?? {},
    secrets: event.secrets ?? {},
    env: {},
    runner: { os: 'Linux', temp: path.join(tmp, 'runner-temp') },
    steps: {},
    jobFailed: false,
  };
  const env: Record<string, string> = {};
  for (const level of [workflow.env ?? {}, job.env ?? {}]) for (const [k, v] of Object.entries(level)) env[k] = substitute(String(v), { ...ctx, env });
  ctx.env = env;
  const runnerEnv = {
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: ws,
    GITHUB_EVENT_NAME: event.name,
    GITHUB_REF: event.ref,
    GITHUB_SHA: event.sha,
    GITHUB_RUN_ID: String(event.runId),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_REPOSITORY: 'acme/support-bot',
    RUNNER_OS: 'Linux',
    RUNNER_TEMP: ctx.runner.temp!,
  };
  fs.mkdirSync(ctx.runner.temp!, { recursive: true });
  const results: StepResult[] = [];
  for (const [n, step] of (job.steps as any[]).entries()) {
    const name: string = step.name ?? step.uses ?? step.run;
    const result: StepResult = { name, id: step.id, ran: 'skipped', outcome: 'skipped' };
    results.push(result);
    const record = (outcome: 'success' | 'failure' | 'skipped') => {
      result.outcome = outcome;
      if (step.id) ctx.steps[step.id] = { outcome, conclusion: outcome === 'failure' && step['continue-on-error'] ? 'success' : outcome };
      if (outcome === 'failure' && !step['continue-on-error']) ctx.jobFailed = true;
    };
    if (!condition(step.if, ctx)) {
      record('skipped');
      continue;
    }
    const stepEnv = { ...env };
    for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = substitute(String(v), { ...ctx, env: stepEnv });
    if (step.uses) {
      const uses = String(step.uses);
      const withs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, substitute(String(v), { ...ctx, env: stepEnv })]));
      result.ran = 'action';
      result.action = { uses, with: withs };
      const paths = (withs.path ?? '').split('\n').map((p) => p.trim()).filter(Boolean);
      if (uses.startsWith('actions/cache/restore@')) {
        result.action.restored = cache.restore([withs.key!, ...(withs['restore-keys'] ?? '').split('\n').map((k) => k.trim()).filter(Boolean)], false, ws);
      } else if (uses.startsWith('actions/cache/save@')) {
        result.action.savedDir = cache.save(withs.key!, ws, paths);
      } else if (!/^actions\/(checkout|setup-node|upload-artifact)@/.test(uses)) {
        throw new Error(`step ${n + 1} uses ${uses}: the test knows no such action`);
      }
      record('success');
      continue;
    }
    const script = substitute(String(step.run), { ...ctx, env: stepEnv });
    if (!invokesEvals(script) && !invokesGh(script)) {
      result.ran = 'not-evals';
      record('success');
      continue;
    }
    const summary = path.join(ctx.runner.temp!, `step_summary_${n}`);
    fs.writeFileSync(summary, '');
    const out = path.join(ctx.runner.temp!, `output_${n}`);
    result.ran = 'shell';
    result.shell = await bash(script, ws, { ...runnerEnv, ...stepEnv, GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: out, GITHUB_ENV: `${out}.env` });
    result.summary = fs.readFileSync(summary, 'utf8');
    record(result.shell.code === 0 ? 'success' : 'failure');
  }
  return results;
}

const explain = (steps: StepResult[]) =>
  steps
    .filter((s) => s.shell)
    .map((s) => `--- ${s.name}: exit ${s.shell!.code}\n${s.shell!.stdout}\n${s.shell!.stderr}`)
    .join('\n');

function step(steps: StepResult[], name: RegExp): StepResult {
  const found = steps.filter((s) => name.test(s.name));
  if (found.length !== 1) throw new Error(`expected one step named ${name}, found ${found.map((s) => s.name).join(', ') || 'none'}`);
  return found[0]!;
}

describe('e2e: the GitHub Actions recipe (examples/ci/github-actions.yml, docs/ci.md)', () => {
  const cache = new CacheStore();
  const workflow = parse(fs.readFileSync(path.join(root, 'examples/ci/github-actions.yml'), 'utf8'));
  const dataDir: string = workflow.env.EVALS_DATA_DIR;
  const outputs: string = workflow.env.EVALS_OUTPUTS;
  const mainSha = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
  const baselineRun = `main-${mainSha}-1`;

  it('runs on pull requests and pushes to main; the data directory is what is cached', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect(workflow.on.push.branches).toEqual(['main']);
    const steps = Object.values(workflow.jobs as Record<string, any>)[0].steps as any[];
    const cached = steps.filter((s) => /^actions\/cache\/(restore|save)@/.test(s.uses ?? ''));
    expect(cached).toHaveLength(2);
    for (const s of cached) expect(s.with.path).toBe('${{ env.EVALS_DATA_DIR }}');
  });

  it('a push to main records the baseline, pins it and saves the data directory in the cache', async () => {
    const ws = workspace('gh-main', outputs, 'good');
    const steps = await runGithubJob(ws, { name: 'push', ref: 'refs/heads/main', sha: mainSha, runId: 101 }, cache);
    const baseline = step(steps, /baseline/i);
    if (baseline.outcome !== 'success') throw new Error(explain(steps));
    expect(baseline.shell!.stdout).toContain(`run ${baselineRun}: PASS`);
    expect(baseline.shell!.stdout).toContain(`pinned run ${baselineRun} as the baseline of support-triage for agent/support-bot`);
    expect(baseline.shell!.stderr).toContain('evals: no --server: embedded service on .evals');
    expect(baseline.summary).toMatch(/^## evals run: PASS/);
    expect(step(steps, /^Gate/).outcome).toBe('skipped');
    expect(step(steps, /Comment/).outcome).toBe('skipped');
    expect(steps.filter((s) => s.ran === 'not-evals').map((s) => s.name)).toEqual(['Install (evals is a dev dependency)', "Produce the agent's outputs"]);
    // The cache now holds the data directory, the embedded store with the pinned baseline.
    const saved = step(steps, /^Save/);
    expect(saved.outcome).toBe('success');
    expect(cache.entries.map((e) => e.key)).toEqual(['evals-data-v1-main-101-1']);
    const store = path.join(saved.action!.savedDir!, dataDir);
    for (const entry of ['postgres', 'bus', 'secret']) expect(fs.existsSync(path.join(store, entry))).toBe(true);
    expect(fs.existsSync(path.join(store, 'owner.json'))).toBe(false); // no process holds it once the step ended
  }, 180_000);

  it('a pull request with regressed outputs: the gate exits 1 against the cached baseline; JUnit uploaded, summary in the job summary and a PR comment', async () => {
    const ws = workspace('gh-pr-regressed', outputs, 'regressed');
    const steps = await runGithubJob(ws, { name: 'pull_request', ref: 'refs/pull/7/merge', sha: 'f'.repeat(40), runId: 202, pr: 7 }, cache);
    expect(step(steps, /^Restore/).action!.restored).toBe('evals-data-v1-main-101-1'); // by the restore-keys prefix
    expect(step(steps, /baseline/i).outcome).toBe('skipped');
    expect(step(steps, /^Save/).outcome).toBe('skipped');
    const gate = step(steps, /^Gate/);
    if (gate.shell?.code !== 1) throw new Error(explain(steps));
    expect(gate.outcome).toBe('failure');
    expect(gate.shell.stdout).toMatch(/gate [0-9a-f-]{36}: FAIL/);
    expect(gate.shell.stdout).toContain(`run pr7-202-1`);
    expect(gate.shell.stdout).toContain(`regression: REGRESSED against ${baselineRun} (pinned)`);
    // The Markdown summary: in the job summary, and posted as the PR comment.
    const md = fs.readFileSync(path.join(ws, 'reports/evals-gate.md'), 'utf8');
    expect(md).toMatch(/^## evals gate: FAIL/);
    expect(md).toContain(`REGRESSED against \`${baselineRun}\` (pinned)`);
    expect(gate.summary).toBe(md);
    const comment = step(steps, /Comment/);
    expect(comment.outcome).toBe('success');
    const gh = calls().filter((c) => c.tool === 'gh');
    expect(gh).toHaveLength(1);
    expect(gh[0]!.args).toEqual(['pr', 'comment', '7', '--edit-last', '--create-if-none', '--body-file', 'reports/evals-gate.md']);
    expect(gh[0]!.body).toBe(md);
    expect(gh[0]!.env).toEqual({ GH_TOKEN: 'ghs_test_token', GH_REPO: 'acme/support-bot' });
    // The JUnit report, in the uploaded folder, with the failing cases.
    const upload = step(steps, /Upload/);
    expect(upload.outcome).toBe('success');
    const junit = path.join(ws, upload.action!.with.path!, 'evals-gate.xml');
    const suite = parseJunit(junit).testsuites.testsuite[0];
    expect(suite).toMatchObject({ name: 'support-triage', tests: String(SUITE_CASES), failures: String(REGRESSED_FAILURES), errors: '0' });
    expect(md).toContain(`**Failing cases** (${REGRESSED_FAILURES} of ${SUITE_CASES})`);
  }, 120_000);

  it('a pull request with good outputs: the gate exits 0 against the same baseline', async () => {
    const ws = workspace('gh-pr-good', outputs, 'good');
    const steps = await runGithubJob(ws, { name: 'pull_request', ref: 'refs/pull/8/merge', sha: 'e'.repeat(40), runId: 203, pr: 8 }, cache);
    const gate = step(steps, /^Gate/);
    if (gate.shell?.code !== 0) throw new Error(explain(steps));
    expect(gate.shell.stdout).toContain(`regression: no regression against ${baselineRun} (pinned)`);
    expect(gate.summary).toMatch(/^## evals gate: PASS/);
    expect(parseJunit(path.join(ws, 'reports/evals-gate.xml')).testsuites.testsuite[0]).toMatchObject({ tests: String(SUITE_CASES), failures: '0' });
    expect(cache.entries).toHaveLength(1); // a pull request never saves the store
  }, 120_000);

  it('the server variant: EVALS_SERVER and the API key reach the CLI, no cache; an unreachable server is exit 3', async () => {
    const ws = workspace('gh-pr-server', outputs, 'good');
    const server = `http://127.0.0.1:${await closedPort()}`;
    const steps = await runGithubJob(ws, { name: 'pull_request', ref: 'refs/pull/9/merge', sha: 'd'.repeat(40), runId: 204, pr: 9, vars: { EVALS_SERVER: server }, secrets: { EVALS_API_KEY: 'evk_test' } }, cache);
    expect(step(steps, /^Restore/).outcome).toBe('skipped');
    const gate = step(steps, /^Gate/);
    if (gate.shell?.code !== 3) throw new Error(explain(steps));
    expect(gate.shell.stderr).toContain(server.replace('http://', ''));
    expect(gate.shell.stderr).not.toContain('embedded service');
    expect(gate.shell.stdout).toContain('::error title=evals gate::exit 3');
    expect(fs.existsSync(path.join(ws, dataDir))).toBe(false);
    expect(step(steps, /Comment/).shell!.stdout).toContain('no gate summary to post');
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------------
// GitLab CI: `rules: if`, `extends`, the cache by key and policy, script then after_script.

interface GitlabPipeline {
  source: 'push' | 'merge_request_event';
  branch?: string;
  mr?: number;
  pipelineId: number;
  variables?: Record<string, string>;
}

function ruleMatches(expression: string, vars: Record<string, string>): boolean {
  const operand = (t: string) => (t.startsWith('$') ? (vars[t.slice(1)] ?? null) : t.startsWith('"') || t.startsWith("'") ? t.slice(1, -1) : (() => { throw new Error(`rules:if ${expression}: cannot read ${t}`); })());
  return expression.split('||').some((alt) =>
    alt.split('&&').every((clause) => {
      const m = /^\s*(\$\w+|"[^"]*"|'[^']*')\s*(==|!=)\s*(\$\w+|"[^"]*"|'[^']*')\s*$/.exec(clause);
      if (!m) {
        const only = /^\s*\$(\w+)\s*$/.exec(clause);
        if (!only) throw new Error(`rules:if ${expression}: the test reads only $A == $B, $A != "x" and $A`);
        return (vars[only[1]!] ?? '') !== '';
      }
      return (operand(m[1]!) === operand(m[3]!)) === (m[2] === '==');
    }),
  );
}

function resolveJob(config: Record<string, any>, name: string): any {
  const job = config[name];
  if (!job.extends) return job;
  const merge = (a: any, b: any): any => (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b) ? Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, k in b ? merge(a[k], b[k]) : a[k]])) : b === undefined ? a : b);
  const { extends: parents, ...own } = job;
  return [parents].flat().reduce((acc: any, parent: string) => merge(resolveJob(config, parent), acc), own);
}

const expand = (text: string, vars: Record<string, string>) => text.replace(/\$\{?(\w+)\}?/g, (_, v: string) => vars[v] ?? '');

interface JobResult {
  name: string;
  script: Shell;
  afterScript?: Shell;
  restored: string | null;
  savedDir?: string;
  cacheKey: string;
  cachePaths: string[];
  artifacts: any;
}

async function runGitlabPipeline(ws: string, pipeline: GitlabPipeline, cache: CacheStore): Promise<JobResult[]> {
  const config = parse(fs.readFileSync(path.join(root, 'examples/ci/gitlab-ci.yml'), 'utf8'), { merge: true }) as Record<string, any>;
  const reserved = new Set(['variables', 'stages', 'default', 'include', 'workflow', 'image', 'services', 'cache', 'before_script', 'after_script']);
  const predefined: Record<string, string> = {
    CI: 'true',
    GITLAB_CI: 'true',
    CI_PROJECT_DIR: ws,
    CI_PROJECT_ID: '4242',
    CI_API_V4_URL: 'https://gitlab.example.com/api/v4',
    CI_DEFAULT_BRANCH: 'main',
    CI_PIPELINE_SOURCE: pipeline.source,
    CI_PIPELINE_ID: String(pipeline.pipelineId),
    CI_COMMIT_SHA: `${pipeline.pipelineId}`.padEnd(40, '0'),
    ...(pipeline.branch ? { CI_COMMIT_BRANCH: pipeline.branch, CI_COMMIT_REF_NAME: pipeline.branch } : {}),
    ...(pipeline.mr !== undefined ? { CI_MERGE_REQUEST_IID: String(pipeline.mr), CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main' } : {}),
  };
  const results: JobResult[] = [];
  for (const name of Object.keys(config).filter((k) => !k.startsWith('.') && !reserved.has(k))) {
    const job = resolveJob(config, name);
    const vars: Record<string, string> = { ...predefined, ...Object.fromEntries(Object.entries({ ...(config.variables ?? {}), ...(job.variables ?? {}) }).map(([k, v]) => [k, String(v)])), ...(pipeline.variables ?? {}), CI_JOB_NAME: name, CI_JOB_ID: String(pipeline.pipelineId * 10 + results.length) };
    const rule = (job.rules ?? []).find((r: any) => r.if === undefined || ruleMatches(r.if, vars));
    if (!rule || rule.when === 'never') continue;
    // before_script prepares the checkout (npm ci, the agent's outputs): the test did that; evals runs in script.
    for (const line of [job.before_script ?? []].flat()) if (invokesEvals(line)) throw new Error(`${name}: before_script runs evals (${line}); the test runs only script and after_script`);
    const cacheConfig = [job.cache ?? []].flat()[0];
    const cacheKey = cacheConfig ? expand(String(cacheConfig.key), vars) : '';
    const cachePaths: string[] = cacheConfig ? cacheConfig.paths : [];
    const policy: string = cacheConfig?.policy ?? 'pull-push';
    const restored = cacheConfig && policy.includes('pull') ? cache.restore([cacheKey], true, ws) : null;
    const script = await bash([job.script].flat().join('\n'), ws, vars);
    const afterScript = job.after_script ? await bash([job.after_script].flat().join('\n'), ws, vars) : undefined;
    const whenSave = cacheConfig?.when ?? 'on_success';
    const savedDir = cacheConfig && policy.includes('push') && (whenSave === 'always' || (whenSave === 'on_success') === (script.code === 0)) ? cache.save(cacheKey, ws, cachePaths) : undefined;
    results.push({ name, script, afterScript, restored, savedDir, cacheKey, cachePaths, artifacts: job.artifacts });
  }
  return results;
}

const explainJobs = (jobs: JobResult[]) => jobs.map((j) => `--- ${j.name}: exit ${j.script.code}\n${j.script.stdout}\n${j.script.stderr}${j.afterScript ? `\nafter_script: exit ${j.afterScript.code}\n${j.afterScript.stdout}${j.afterScript.stderr}` : ''}`).join('\n');

describe('e2e: the GitLab CI recipe (examples/ci/gitlab-ci.yml, docs/ci.md)', () => {
  const cache = new CacheStore();
  const config = parse(fs.readFileSync(path.join(root, 'examples/ci/gitlab-ci.yml'), 'utf8'), { merge: true });
  const dataDir: string = config.variables.EVALS_DATA_DIR;
  const outputs: string = config.variables.EVALS_OUTPUTS;
  let baselineRun: string;

  it('the default branch records the baseline, pins it and pushes the data directory to the cache', async () => {
    const ws = workspace('gl-main', outputs, 'good');
    const jobs = await runGitlabPipeline(ws, { source: 'push', branch: 'main', pipelineId: 501 }, cache);
    expect(jobs.map((j) => j.name)).toEqual(['evals:baseline']);
    const [job] = jobs;
    if (job!.script.code !== 0) throw new Error(explainJobs(jobs));
    baselineRun = /run (main-\S+): PASS/.exec(job!.script.stdout)![1]!;
    expect(baselineRun).toBe(`main-${'501'.padEnd(40, '0')}-501`);
    expect(job!.script.stdout).toContain(`pinned run ${baselineRun} as the baseline of support-triage for agent/support-bot`);
    expect(fs.readFileSync(path.join(ws, 'reports/evals-baseline.md'), 'utf8')).toMatch(/^## evals run: PASS/);
    expect(parseJunit(path.join(ws, job!.artifacts.reports.junit)).testsuites.testsuite[0]).toMatchObject({ tests: String(SUITE_CASES), failures: '0' });
    // The cache is the data directory.
    expect(job!.cachePaths.map((p) => path.resolve(ws, p))).toEqual([path.resolve(ws, dataDir)]);
    expect(job!.cacheKey).toBe('evals-data-v1-main');
    const store = path.join(job!.savedDir!, dataDir);
    for (const entry of ['postgres', 'bus', 'secret']) expect(fs.existsSync(path.join(store, entry))).toBe(true);
  }, 180_000);

  it('a merge request with regressed outputs: the gate exits 1 against the cached baseline; JUnit report, summary artifact and an MR note', async () => {
    const ws = workspace('gl-mr-regressed', outputs, 'regressed');
    const before = calls().length;
    const jobs = await runGitlabPipeline(ws, { source: 'merge_request_event', branch: undefined, mr: 12, pipelineId: 602, variables: { EVALS_NOTE_TOKEN: 'glpat-test' } }, cache);
    expect(jobs.map((j) => j.name)).toEqual(['evals:gate']);
    const [job] = jobs;
    expect(job!.restored).toBe('evals-data-v1-main');
    if (job!.script.code !== 1) throw new Error(explainJobs(jobs));
    expect(job!.script.stdout).toContain(`regression: REGRESSED against ${baselineRun} (pinned)`);
    expect(job!.savedDir).toBeUndefined(); // policy pull: a merge request never changes the baseline
    expect(job!.artifacts.when).toBe('always');
    const suite = parseJunit(path.join(ws, job!.artifacts.reports.junit)).testsuites.testsuite[0];
    expect(suite).toMatchObject({ name: 'support-triage', tests: String(SUITE_CASES), failures: String(REGRESSED_FAILURES) });
    const md = fs.readFileSync(path.join(ws, 'reports/evals-gate.md'), 'utf8');
    expect(md).toMatch(/^## evals gate: FAIL/);
    expect(job!.artifacts.paths.map((p: string) => path.resolve(ws, p))).toContain(path.resolve(ws, 'reports'));
    // after_script posted the summary as a note on the merge request.
    if (job!.afterScript?.code !== 0) throw new Error(explainJobs(jobs));
    const curl = calls().slice(before).filter((c) => c.tool === 'curl');
    expect(curl).toHaveLength(1);
    expect(curl[0]!.args).toContain('https://gitlab.example.com/api/v4/projects/4242/merge_requests/12/notes');
    expect(curl[0]!.args).toContain('PRIVATE-TOKEN: glpat-test');
    expect(curl[0]!.body).toBe(md);
  }, 120_000);

  it('a merge request with good outputs passes (exit 0); without EVALS_NOTE_TOKEN no note is attempted', async () => {
    const ws = workspace('gl-mr-good', outputs, 'good');
    const before = calls().length;
    const jobs = await runGitlabPipeline(ws, { source: 'merge_request_event', mr: 13, pipelineId: 603 }, cache);
    const [job] = jobs;
    if (job!.script.code !== 0) throw new Error(explainJobs(jobs));
    expect(job!.script.stdout).toContain(`regression: no regression against ${baselineRun} (pinned)`);
    expect(fs.readFileSync(path.join(ws, 'reports/evals-gate.md'), 'utf8')).toMatch(/^## evals gate: PASS/);
    expect(job!.afterScript!.code).toBe(0);
    expect(calls().slice(before)).toEqual([]);
  }, 120_000);

  it('the server variant: EVALS_SERVER and EVALS_API_KEY as CI/CD variables reach the CLI; exit 3 is the one retried', async () => {
    const ws = workspace('gl-mr-server', outputs, 'good');
    const server = `http://127.0.0.1:${await closedPort()}`;
    const jobs = await runGitlabPipeline(ws, { source: 'merge_request_event', mr: 14, pipelineId: 604, variables: { EVALS_SERVER: server, EVALS_API_KEY: 'evk_test' } }, cache);
    const [job] = jobs;
    if (job!.script.code !== 3) throw new Error(explainJobs(jobs));
    expect(job!.script.stderr).toContain(server.replace('http://', ''));
    expect(job!.script.stderr).not.toContain('embedded service');
    expect(resolveJob(config, 'evals:gate').retry).toEqual({ max: 1, exit_codes: 3 });
  }, 60_000);
});
