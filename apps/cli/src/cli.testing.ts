import * as path from 'node:path';
import { runCli } from './cli';
import type { Io } from './command';
import { CliError } from './exit-codes';

/** Test helpers: run the CLI in-process against a scripted fake of the HTTP API. */
export const repoRoot = path.resolve(__dirname, '../../..');

export interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

export type Route = (req: Recorded) => { status: number; json?: unknown; text?: string; contentType?: string } | Error | undefined;

/** A fetch that answers from `route` and records every request. An Error result is thrown, like undici does. */
export function fakeFetch(route: Route): { fetch: typeof fetch; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const impl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init?.headers as Record<string, string>) ?? {})) headers[k.toLowerCase()] = v;
    const req: Recorded = { method: init?.method ?? 'GET', url: String(input), headers, body: typeof init?.body === 'string' ? init.body : undefined };
    calls.push(req);
    const answer = route(req);
    if (answer instanceof Error) throw answer;
    if (!answer) return new Response(JSON.stringify({ code: 'NOT_FOUND', message: `no route ${req.method} ${req.url}` }), { status: 404, headers: { 'content-type': 'application/json' } });
    const text = answer.text ?? JSON.stringify(answer.json ?? {});
    return new Response(text, { status: answer.status, headers: { 'content-type': answer.contentType ?? (answer.text !== undefined ? 'text/plain' : 'application/json') } });
  };
  return { fetch: impl as typeof fetch, calls };
}

/** undici's error for a refused connection: TypeError('fetch failed') with a cause carrying the code. */
export function networkFailure(code: string): Error {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
}

export async function cli(args: string[], options: { env?: Record<string, string>; fetch?: typeof fetch; cwd?: string } = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
    env: { EVALS_SERVER: 'http://evals.test:3001', ...(options.env ?? {}) },
    isTty: false,
    cwd: options.cwd ?? repoRoot,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const code = await runCli(args, io);
  return { code, out, err };
}

/** A completed run as `POST /v1/runs` answers it (docs/read-model.md), with a regression decision. */
export function runView(o: { run_id?: string; n: number; passed: number; threshold?: number; verdict?: string; comparison?: unknown; missing?: number }): unknown {
  const threshold = o.threshold ?? 0.8;
  const rate = o.n ? o.passed / o.n : null;
  return {
    run: {
      run_id: o.run_id ?? 'ci-1',
      suite_key: 'support-triage',
      suite_version: 2,
      pass_threshold: threshold,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'support-bot',
      variant: 'prompt-v7',
      status: 'completed',
      case_count: o.n,
      scored: o.n,
      passed: o.passed,
      missing_outputs: o.missing ?? 0,
      completed_at: '2026-11-30T10:00:00.000Z',
      summary: { n: o.n, passed: o.passed, score: rate, pass_rate: rate, pass_rate_ci: { lower: 0.715, upper: 0.917, level: 0.95 }, run_passed: rate !== null && rate >= threshold },
    },
    eval_result: { run_id: o.run_id ?? 'ci-1', passed: rate !== null && rate >= threshold },
    regression: { verdict: o.verdict ?? 'no_baseline', baseline_run_id: o.comparison ? 'ci-0' : null, chosen_by: o.comparison ? 'automatic' : null, comparison: o.comparison ?? null },
  };
}

export const REGRESSED_COMPARISON = {
  run_id: 'ci-1',
  baseline_run_id: 'ci-0',
  score_drop: 0.12,
  regression_threshold: 0.1,
  pass_rate_diff: { diff: -0.12, lower: -0.25, upper: -0.01, level: 0.95, method: 'newcombe_hybrid_score' },
  run: { passed: 42, n: 50, pass_rate: 0.84 },
  baseline: { passed: 48, n: 50, pass_rate: 0.96 },
  verdict: 'regressed',
  chosen_by: 'automatic',
  changes: { suite_version: { baseline: 1, run: 2 }, scorer_versions: [], judge_model: null, prompt_version: null, anything_changed: true },
};

/** A gate answer exactly as docs/gate.md shows it, with overridable fields. */
export function gateAnswer(o: Partial<Record<string, unknown>> = {}): Record<string, unknown> {
  return {
    gate_id: '8f1c2a4e-0b1d-4c55-9a8e-3f0e6f1d2c3b',
    recorded_verdict: 'fail',
    effective_verdict: 'fail',
    reasons: [{ code: 'regressed', message: 'score dropped 0.12 against ci-4700; the pass-rate interval excludes zero' }],
    warnings: [{ code: 'judge_credential_missing', message: 'no judge credential: 2 judge cases not scored' }],
    run: { run_id: 'ci-4711', suite_key: 'support-triage', suite_version: 3, n: 50, passed: 42, pass_rate: 0.84, pass_rate_ci: { lower: 0.715, upper: 0.917, level: 0.95 }, score: 0.84, pass_threshold: 0.8 },
    comparison: {
      verdict: 'regressed',
      baseline_run_id: 'ci-4700',
      chosen_by: 'explicit',
      score_drop: 0.12,
      pass_rate_diff: { diff: -0.12, lower: -0.25, upper: -0.01, level: 0.95 },
      run: { passed: 42, n: 50 },
      baseline: { passed: 48, n: 50 },
    },
    judge: { used: true, status: 'certified', model: 'gpt-4o-2024-08-06', prompt_version: 'judge-v1', cases_not_scored: 0, cache: { hits: 10, misses: 2 } },
    budget: { decision: 'allowed' },
    sample: { size: 50, seed: 'ci-4711' },
    cases: [
      { case_id: 'route-double-charge', passed: true, score: 1, label: 'match' },
      { case_id: 'route-refund-status', passed: false, score: 0, label: 'mismatch' },
      { case_id: 'reply-tone', passed: false, score: 0, label: 'judge_credential_missing' },
    ],
    override: null,
    recorded_at: '2026-11-30T10:00:00.000Z',
    ...o,
  };
}

/** The CliError a call rejects with; fails the test when it resolves or throws anything else. */
export async function failure(p: Promise<unknown>): Promise<CliError> {
  try {
    await p;
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}
