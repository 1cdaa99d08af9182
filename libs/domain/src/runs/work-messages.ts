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
}

export interface ScoreWorkV1 {
  readonly run_id: string;
  readonly items: readonly WorkItem[];
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
    raw = JSON.parse(typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8'));
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
  for (let i = 0; i < m.data.items.length; i++) {
    const item = m.data.items[i];
    if (typeof item?.case_id !== 'string') return { ok: false, reason: `data.items[${i}].case_id: not a string` };
    if (typeof item?.output !== 'string') return { ok: false, reason: `data.items[${i}].output: not a string` };
  }
  return { ok: true, message: m as WorkMessage };
}
