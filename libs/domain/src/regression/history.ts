/**
 * A subject's history newest first, as `run_verdicts` orders it (`ORDER BY completed_at DESC, run_id DESC`):
 * what a micro-batch's decisions merge their own verdicts into, so a run decided earlier in the batch is in
 * the next one's history exactly where the table would put it once inserted (issue 28).
 *
 * `completed_at` is the table's text form (UTC, milliseconds, fixed width), so comparing the strings compares
 * the times; run ids compare by code unit, which is the order of the database's C collation for them.
 */
export interface HistoryEntry {
  readonly run_id: string;
  readonly completed_at: string;
}

export function newestFirst(a: HistoryEntry, b: HistoryEntry): number {
  if (a.completed_at !== b.completed_at) return a.completed_at > b.completed_at ? -1 : 1;
  return a.run_id === b.run_id ? 0 : a.run_id > b.run_id ? -1 : 1;
}

/**
 * The first `limit` of `read` (a page of the table, newest first) and `added` (rows not in the table when
 * `read` was read): the page the table would answer once `added` were inserted. `read` is kept as it came.
 */
export function mergeHistory<T extends HistoryEntry>(read: readonly T[], added: readonly T[], limit: number): T[] {
  if (added.length === 0) return read.slice(0, limit);
  const sorted = [...added].sort(newestFirst);
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < read.length || j < sorted.length)) {
    if (j >= sorted.length || (i < read.length && newestFirst(read[i], sorted[j]) <= 0)) out.push(read[i++]);
    else out.push(sorted[j++]);
  }
  return out;
}
