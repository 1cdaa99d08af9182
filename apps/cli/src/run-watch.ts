import { UnreachableError } from './exit-codes';
import { ApiError } from './exit-codes';
import { isObject, url, type ApiClient } from './http';
import type { Progress } from './progress';

/**
 * Progress of a run being scored on the server. `POST /v1/runs` and `POST /v1/gate` answer only when the
 * run is complete (R5), so the CLI cannot learn progress from them; while they wait, it reads the run in the
 * read model (`GET /v1/runs/:id`: `scored` of `case_count`) and draws a real bar from that. When the read
 * model cannot tell (not reachable, run not projected yet), the progress line stays a spinner with the
 * elapsed time: it never invents a number.
 */
export function watchRunProgress(client: ApiClient, runId: string, progress: Progress, everyMs = 500): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const tick = async () => {
    if (stopped) return;
    try {
      const answer = await client.get(url(client.endpoints.read, `/v1/runs/${encodeURIComponent(runId)}`), { timeoutMs: 2000 });
      const run = isObject(answer.body) && isObject(answer.body.run) ? answer.body.run : null;
      if (!stopped && run && typeof run.scored === 'number' && typeof run.case_count === 'number' && run.case_count > 0) {
        progress.update(run.scored, run.case_count);
      }
    } catch {
      // Progress is a courtesy: the answer of the POST decides.
    }
    if (!stopped) timer = setTimeout(tick, everyMs);
  };
  timer = setTimeout(tick, everyMs);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/**
 * After `202 RUN_PENDING` (the server stopped waiting, RUN_TIMEOUT_MS): poll the read model until the run is
 * completed and compared with its baseline, or until the CLI's own --timeout (exit 3).
 */
export async function waitForCompletedRun(client: ApiClient, runId: string, deadline: number, progress: Progress, now: () => number = Date.now): Promise<unknown> {
  let delay = 250;
  for (;;) {
    try {
      const answer = await client.get(url(client.endpoints.read, `/v1/runs/${encodeURIComponent(runId)}`), { timeoutMs: Math.max(1000, Math.min(10_000, deadline - now())) });
      const body: Partial<typeof answer.body> = isObject(answer.body) ? answer.body : {};
      const run: Partial<NonNullable<typeof body.run>> = isObject(body.run) ? body.run : {};
      if (typeof run.scored === 'number' && typeof run.case_count === 'number' && run.case_count > 0) progress.update(run.scored, run.case_count);
      if (run.status === 'completed' && body.eval_result && body.regression) return body;
    } catch (error) {
      // The run may not be projected yet (404); anything else is the read model failing us.
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
    if (now() > deadline) {
      throw new UnreachableError(`run ${runId} was accepted but is still being scored; see GET ${client.endpoints.read}/v1/runs/${runId} (raise --timeout to wait longer)`);
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 2000);
  }
}
