import { eventually } from './app-processes';

/**
 * The ingestion answers a run (POST /v1/runs, the gate) as soon as the run's stream in the shared log holds
 * its comparison (issue 27: it folds the stream, it reads no table of the read model); the read model
 * projects the same `run.compared` from the bus a moment later. A test that reads the read model right after
 * such an answer waits for that projection, as every consumer of a projection does (ADR 0006).
 *
 * `view` reads `GET /v1/runs/:id` of the read model and gives its body, or null while it is not there (404).
 */
export function untilProjected<T extends { readonly regression?: unknown }>(view: () => Promise<T | null>, what = 'the run', timeoutMs = 30_000): Promise<T> {
  return eventually(async () => {
    const body = await view();
    return body !== null && body.regression ? body : undefined;
  }, timeoutMs, `${what} projected by the read model with its verdict`);
}
