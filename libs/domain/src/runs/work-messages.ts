/**
 * Commands on the work-queue stream EVALS_WORK, from ingestion to the scoring workers (docs/pipeline.md).
 * `evals.work.score` is the one message in the system that carries candidate outputs after the edge: it
 * lives in a work-queue stream only until a worker has scored it and acknowledged it (D1), and it is never
 * logged. Envelope as everywhere: `{schema, type, version, data, metadata}`.
 */
export const WORK_SUBJECTS = {
  score: 'evals.work.score',
  seal: 'evals.work.seal',
} as const;

export interface WorkItem {
  readonly case_id: string;
  readonly output: string;
  /**
   * Optional (additive, v1): `HMAC(key, output)` hex, as `detailHash` makes it - the ingestion hashed every
   * inline output for the request hash already. Read only when the message's `detail_key` names the
   * reader's own key; absent (the streamed path, older producers), the worker hashes the output itself.
   */
  readonly detail_hash?: string;
}

export interface ScoreWorkV1 {
  readonly run_id: string;
  readonly items: readonly WorkItem[];
  /** Optional (additive, v1): `detailKeyId` of the key the items' `detail_hash` were made with. */
  readonly detail_key?: string;
}

export interface SealWorkV1 {
  readonly run_id: string;
}

export interface WorkMetadata {
  readonly message_id: string;
  readonly correlation_id: string;
  readonly causation_id: string;
  readonly occurred_at: string;
}

export type WorkMessage =
  | { readonly type: typeof WORK_SUBJECTS.score; readonly version: 1; readonly data: ScoreWorkV1; readonly metadata: WorkMetadata }
  | { readonly type: typeof WORK_SUBJECTS.seal; readonly version: 1; readonly data: SealWorkV1; readonly metadata: WorkMetadata };

export function encodeWork(message: WorkMessage): string {
  return JSON.stringify({ schema: `${message.type}.v${message.version}`, ...message });
}

/** Validates a work message; the reason names fields only, never a value (D1). */
export function decodeWork(payload: Uint8Array | string): { ok: true; message: WorkMessage } | { ok: false; reason: string } {
  let raw: unknown;
  try {
    // A view on the delivery's bytes, not a copy of them (a work message can be hundreds of KiB).
    raw = JSON.parse(typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed JSON' };
  }
  const m = raw as { type?: unknown; version?: unknown; data?: any; metadata?: any };
  if (typeof m !== 'object' || m === null) return { ok: false, reason: 'not an object' };
  if (m.version !== 1) return { ok: false, reason: 'version: unsupported' };
  if (typeof m.metadata?.message_id !== 'string') return { ok: false, reason: 'metadata.message_id: missing' };
  if (typeof m.data?.run_id !== 'string') return { ok: false, reason: 'data.run_id: missing' };
  if (m.type === WORK_SUBJECTS.seal) return { ok: true, message: m as WorkMessage };
  if (m.type !== WORK_SUBJECTS.score) return { ok: false, reason: 'type: unknown' };
  if (!Array.isArray(m.data.items)) return { ok: false, reason: 'data.items: not an array' };
  const keyed = m.data.detail_key !== undefined;
  if (keyed && (typeof m.data.detail_key !== 'string' || m.data.detail_key.length === 0)) return { ok: false, reason: 'data.detail_key: not a key id' };
  for (let i = 0; i < m.data.items.length; i++) {
    const item = m.data.items[i];
    if (typeof item?.case_id !== 'string') return { ok: false, reason: `data.items[${i}].case_id: not a string` };
    if (typeof item.output !== 'string') return { ok: false, reason: `data.items[${i}].output: not a string` };
    const hash: unknown = item.detail_hash;
    // Only a well-formed hash under a named key may stand in for the worker's own (it goes into evidence as is).
    if (hash !== undefined && (!keyed || !isHexHash(hash))) return { ok: false, reason: `data.items[${i}].detail_hash: not a keyed hash` };
  }
  return { ok: true, message: m as WorkMessage };
}

/** sha256 hex, lower case, as `digest('hex')` writes it. */
function isHexHash(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = value.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
