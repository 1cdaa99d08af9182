import * as fs from 'node:fs';
import { MAX_INLINE_OUTPUTS, MAX_MESSAGE_BYTES, utf8ByteLength } from '@evals/limits';
import { CliError, EXIT } from './exit-codes';
import { url, type ApiClient } from './http';
import { ENVELOPE_ALLOWANCE, withCaseOfField } from './outputs-file';
import { streamOutputsFile } from './outputs-stream';
import type { Progress } from './progress';

/**
 * Runs of any size (issue 15). Up to the inline cap - MAX_INLINE_OUTPUTS outputs whose JSON fits one message
 * (MAX_MESSAGE_BYTES less the envelope's allowance) - a run travels inline in `POST /v1/runs` as before.
 * Above it, the run is opened without outputs (`POST /v1/streamed-runs`), the outputs follow in batches read
 * from the file as a stream (`.../outputs`), and the run is sealed (`.../seal`): the same intake, run model
 * and scoring on the server, the same result, and the client holds one batch at a time, not the file.
 */
export interface OutputsScan {
  readonly count: number;
  /** The outputs as `[{case_id, output}, ...]` JSON, in bytes: what an inline request would carry. */
  readonly jsonBytes: number;
}

/** A batch: at most this many outputs... */
export const BATCH_OUTPUTS = 1_000;
/**
 * ...and at most this much JSON (well under the service's HTTP_BODY_LIMIT_MB default of 64, and small enough
 * that the batches in flight, each held as objects, JSON and request body, stay a few MB of the client).
 */
export const BATCH_BYTES = 2 * 1024 * 1024;
/** Batches in flight: the server takes each in a round trip to the bus; two keep it busy. */
const IN_FLIGHT = 2;

/**
 * Every check of the outputs file, streamed (formats, ids, duplicates, OUTPUT_TOO_LARGE, with the line): the
 * file is refused here, before anything is sent. An empty file too (the service would answer EMPTY_RUN).
 */
export function scanOutputs(file: string): OutputsScan {
  // The CLI's dry run (cli.ts, checkLocally) and the real run scan the same file: once is enough.
  const key = fileKey(file);
  const known = key !== null ? scans.get(key) : undefined;
  if (known) return known;
  let count = 0;
  let jsonBytes = 2;
  for (const r of streamOutputsFile(file)) {
    count++;
    jsonBytes += rowBytes(r);
  }
  if (count === 0) throw new CliError(EXIT.USAGE, `the outputs file is empty: ${file}`);
  const scan = { count, jsonBytes };
  if (key !== null) scans.set(key, scan);
  return scan;
}

const scans = new Map<string, OutputsScan>();

/** The file as it is now: path, size and modification time (a file rewritten in between is scanned again). */
function fileKey(file: string): string | null {
  try {
    const st = fs.statSync(file);
    return `${file}\0${st.size}\0${st.mtimeMs}`;
  } catch {
    return null;
  }
}

/** Whether the run fits one inline request (`checkRunSize`'s limits). */
export function fitsInline(scan: OutputsScan): boolean {
  return scan.count <= MAX_INLINE_OUTPUTS && scan.jsonBytes <= MAX_MESSAGE_BYTES - ENVELOPE_ALLOWANCE;
}

function rowBytes(r: { case_id: string; output: string }): number {
  return utf8ByteLength(JSON.stringify({ case_id: r.case_id, output: r.output })) + 1;
}

export interface StreamedRunRequest {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version?: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant?: string;
  readonly baseline_run_id?: string;
  readonly source: 'ci';
}

/**
 * Opens the run and sends the file's outputs in batches (drawing `sending` progress); `sealStreamedRun` then
 * seals it.
 * `explain` turns a refusal into the CLI's message (the unknown-suite hints). Every step may be repeated:
 * the open is idempotent on run_id, a batch sent again is de-duplicated, a seal again is the same seal.
 */
export async function sendStreamedOutputs(
  client: ApiClient,
  request: StreamedRunRequest,
  file: string,
  total: number,
  progress: Progress,
  explain: (error: unknown) => Promise<unknown> = async (e) => e,
): Promise<void> {
  await client.post(url(client.endpoints.ingestion, '/v1/streamed-runs'), { json: request }).catch(async (error: unknown) => {
    throw await explain(error);
  });
  const path = `/v1/streamed-runs/${encodeURIComponent(request.run_id)}` as const;
  progress.phase(`sending ${total} outputs`);
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  let failed: unknown = null;
  // A batch is held as its JSON text and its case ids (for a refusal by index), not as objects.
  const send = (parts: string[], caseIds: string[]) => {
    const p = client
      .post(url(client.endpoints.ingestion, `${path}/outputs`), { text: `{"outputs":[${parts.join(',')}]}`, contentType: 'application/json' })
      .then(() => {
        sent += caseIds.length;
        progress.update(sent, total);
      })
      .catch((error: unknown) => {
        failed ??= withCaseOfField(error, [caseIds.map((case_id) => ({ case_id }))]);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  let parts: string[] = [];
  let caseIds: string[] = [];
  let bytes = 0;
  let read = 0;
  // Checked whole by scanOutputs already: this read keeps no case ids.
  for (const r of streamOutputsFile(file, undefined, { duplicates: false })) {
    read++;
    const json = JSON.stringify({ case_id: r.case_id, output: r.output });
    const size = utf8ByteLength(json) + 1;
    if (parts.length > 0 && (parts.length >= BATCH_OUTPUTS || bytes + size > BATCH_BYTES)) {
      send(parts, caseIds);
      parts = [];
      caseIds = [];
      bytes = 0;
      while (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
      if (failed) break;
    }
    parts.push(json);
    caseIds.push(r.case_id);
    bytes += size;
  }
  if (!failed && parts.length > 0) send(parts, caseIds);
  await Promise.all(inFlight);
  if (failed) throw failed;
  if (read !== total) throw new CliError(EXIT.USAGE, `${file} changed while it was sent (${total} outputs checked, ${read} read): the run ${request.run_id} stays open until it expires; send again with a new --run-id`);
}

/** Seals the run: 200 with the completed run, or 202 RUN_PENDING (then the caller polls the read model). */
export async function sealStreamedRun(client: ApiClient, runId: string): Promise<{ status: number; body: unknown }> {
  const answer = await client.post(url(client.endpoints.ingestion, `/v1/streamed-runs/${encodeURIComponent(runId)}/seal`), { json: { wait: true } });
  return { status: answer.status, body: answer.body };
}
