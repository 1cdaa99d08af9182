import { createHash } from 'node:crypto';
import { canonicalJson, detailHash, detailKeyId, type RunSource, type WorkItem } from '@evals/domain';

/** What of a run request decides whether a second request under the same run id is the same run. */
export interface RunRequestContent {
  readonly suite_key: string;
  readonly suite_version?: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant?: string;
  readonly baseline_run_id?: string;
  readonly source: RunSource;
  /** Present: the run is complete with these outputs. Absent: they follow over the bus. */
  readonly outputs?: readonly WorkItem[];
  /** GT3: score only the cases this seed samples; outputs for other cases are ignored. */
  readonly sample?: { readonly size: number; readonly seed: string };
  readonly judge_cache?: boolean;
  readonly judge_skip?: string;
  /** GT4 throttle (issue 13): only these judge cases may be judged. */
  readonly judge_throttle?: { readonly case_ids: readonly string[] };
}

/** Case ids in one fixed order (UTF-16 code units, as canonicalJson sorts keys), whatever the request's order. */
function byCaseId(a: WorkItem, b: WorkItem): number {
  return a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0;
}

/** The outputs in the order they are hashed and forwarded: by case id, so a retry in another order is the same. */
export function canonicalOutputs(outputs: readonly WorkItem[]): WorkItem[] {
  return [...outputs].sort(byCaseId);
}

/** An output as the intake forwards it: with its keyed hash, made once for the request hash and the evidence. */
export interface KeyedWorkItem extends WorkItem {
  readonly detail_hash: string;
}

/** A run request's hash, and its outputs in canonical order, each with its keyed hash (null: none inline). */
export interface HashedRunRequest {
  readonly hash: string;
  readonly outputs: KeyedWorkItem[] | null;
  /** `detailKeyId` of the key: a work message carrying these hashes names it, so a worker knows they are its own. */
  readonly detailKey: string;
}

/**
 * R7: the hash (sha256, hex) of the canonical JSON of a run request's content - the suite (its version as
 * requested, or null for "the latest"), the subject, variant, baseline, source, sample and judge options, and
 * the outputs as `[case_id, HMAC(key, output)]` pairs sorted by case id (null when the outputs follow over
 * the bus). The same run id with the same hash is the same run (idempotent); with another hash,
 * RUN_ID_CONFLICT. No output text goes into it, and each output only keyed, as evidence keeps it (D2): a
 * plain hash of a one-output run would let anyone who reads the event log confirm a guessed "yes".
 */
export function runRequestHash(request: RunRequestContent, key: string): string {
  return hashRunRequest(request, key).hash;
}

/**
 * The request hash (`runRequestHash`) with the outputs it hashed: sorted by case id and carrying their keyed
 * hash, which the work messages hand on so the worker need not HMAC every output a second time.
 */
export function hashRunRequest(request: RunRequestContent, key: string): HashedRunRequest {
  // canonicalJson sorts keys: everything before "outputs", the outputs, everything after. The outputs are
  // written by hand (a case id is escaped as canonicalJson escapes any string; a hash is plain hex), which
  // spares thousands of small arrays per request; the text is the same, byte for byte.
  const before = {
    baseline_run_id: request.baseline_run_id ?? null,
    judge_cache: request.judge_cache === true,
    judge_skip: request.judge_skip ?? null,
    // Only when present, so the hash of every other request stays what it was.
    ...(request.judge_throttle ? { judge_throttle: [...request.judge_throttle.case_ids] } : {}),
  };
  const after = {
    sample: request.sample ? { size: request.sample.size, seed: request.sample.seed } : null,
    source: request.source,
    subject_id: request.subject_id,
    subject_kind: request.subject_kind,
    suite_key: request.suite_key,
    suite_version: request.suite_version ?? null,
    variant: request.variant ?? null,
  };
  const hash = createHash('sha256');
  hash.update(canonicalJson(before).slice(0, -1), 'utf8');
  let outputs: KeyedWorkItem[] | null = null;
  if (request.outputs) {
    outputs = new Array<KeyedWorkItem>(request.outputs.length);
    let text = ',"outputs":[';
    const sorted = canonicalOutputs(request.outputs);
    for (let i = 0; i < sorted.length; i++) {
      const o = sorted[i];
      const keyed = { case_id: o.case_id, output: o.output, detail_hash: detailHash(key, o.output) };
      outputs[i] = keyed;
      text += `${i === 0 ? '' : ','}[${JSON.stringify(o.case_id)},"${keyed.detail_hash}"]`;
    }
    hash.update(`${text}],`, 'utf8');
  } else {
    hash.update(',"outputs":null,', 'utf8');
  }
  hash.update(canonicalJson(after).slice(1), 'utf8');
  return { hash: hash.digest('hex'), outputs, detailKey: detailKeyId(key) };
}

/**
 * The id the work messages of one run request derive from (`<id>:score:<i>`, `<id>:seal`): the run id and
 * the request's hash, never a random one, so a retry of the same request after a crash or a 503 publishes
 * the same ids and the bus de-duplicates them (JetStream's Nats-Msg-Id, the in-process bus likewise).
 */
export function requestMessageId(runId: string, requestHash: string): string {
  return `${runId}:${requestHash.slice(0, 32)}`;
}
