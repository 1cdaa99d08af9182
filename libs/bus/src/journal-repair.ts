import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { acquireLock, removeLeftoverTemporaries } from './in-process.journal';
import { encodeRecord, readJournal, replaceFileDurably, writeState, type DroppedRecord, type JournalRecord } from './journal-file';

/** What `repairJournals` found and did for one stream's journal. */
export interface JournalRepair {
  readonly file: string;
  readonly stream: string;
  /** What was wrong (empty: nothing, and the files were left as they were). */
  readonly problems: readonly string[];
  readonly keptRecords: number;
  readonly keptMessages: number;
  readonly dropped: readonly DroppedRecord[];
  /** Bytes the state file says the journal held beyond what is left (a truncation): their records are lost. */
  readonly missingBytes: number;
}

/**
 * `evals serve --repair`: makes every journal of the bus directory `dir` openable again, keeping every record
 * whose checksum holds and dropping the rest. It reads each journal as an open would (journal-file.ts), and
 * only where that would refuse writes the intact records - in their order, renumbered, under a new head of
 * the next generation whose last sequence is the highest any source knew (so no sequence is handed out
 * twice) - and a new state file. A journal missing while its state exists becomes an empty one.
 *
 * What dropping costs: a dropped `pub` record is a message lost (an output never scored: its run does not
 * complete until it is submitted again); a dropped `ack` makes its messages redelivered and a dropped `dup`
 * lets a retried publish be stored again - both absorbed by the idempotent consumers. The dropped bytes are
 * not kept anywhere: they may hold candidate outputs (D1). Under the bus directory's lock, so never while
 * a bus has it open.
 */
export async function repairJournals(dir: string): Promise<JournalRepair[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const release = await acquireLock(dir);
  try {
    await removeLeftoverTemporaries(dir);
    const streams = new Set(names.filter((n) => /\.(journal|state)$/.test(n)).map((n) => decodeURIComponent(n.replace(/\.(journal|state)$/, ''))));
    const repairs: JournalRepair[] = [];
    for (const stream of [...streams].sort()) repairs.push(await repairOne(path.join(dir, `${encodeURIComponent(stream)}.journal`), stream));
    return repairs;
  } finally {
    await release();
  }
}

async function repairOne(file: string, stream: string): Promise<JournalRepair> {
  const contents = await readJournal(file, stream, { repair: true });
  const kept = contents.records.map((r) => r.record).filter((r) => r.k !== 'head');
  const missingBytes = contents.state && contents.gen === contents.state.gen ? Math.max(0, contents.state.bytes - (contents.size - contents.tornBytes)) : 0;
  const report: JournalRepair = {
    file,
    stream,
    problems: contents.problems,
    keptRecords: kept.length,
    keptMessages: kept.filter((r) => r.k === 'pub').length,
    dropped: contents.dropped,
    missingBytes,
  };
  if (contents.problems.length === 0) return report;

  let lastSeq = contents.state?.lastSeq ?? 0;
  for (const { record } of contents.records) {
    if (record.k === 'head') lastSeq = Math.max(lastSeq, record.lastSeq);
    if (record.k === 'pub') lastSeq = Math.max(lastSeq, record.seq);
  }
  const gen = Math.max(contents.gen, contents.state?.gen ?? 0) + 1;
  const head: JournalRecord = { k: 'head', v: 2, stream, gen, lastSeq };
  const data = [head, ...kept].map((record, n) => encodeRecord(record, n)).join('');
  await replaceFileDurably(file, `${file}.compacting`, data);
  await writeState(file, { stream, gen, bytes: Buffer.byteLength(data), lastSeq });
  return report;
}

/** The report `evals serve --repair` prints for one journal: what was wrong, kept and dropped, and what it costs. */
export function describeRepair(repair: JournalRepair): string[] {
  const name = path.basename(repair.file);
  if (repair.problems.length === 0) return [`${name}: intact, left as it was (${repair.keptMessages} messages)`];
  const lines = [`${name}: repaired`];
  for (const problem of repair.problems) lines.push(`  found: ${problem}`);
  lines.push(`  kept: ${repair.keptRecords} intact records (${repair.keptMessages} messages)`);
  for (const d of repair.dropped) {
    lines.push(`  dropped: line ${d.line} (byte ${d.offset}, ${d.bytes} bytes): ${d.problem}${d.looksLike ? `; its damaged text reads as ${d.looksLike} (unverified)` : ''}`);
  }
  if (repair.missingBytes > 0) lines.push(`  lost: the last ${repair.missingBytes} bytes the state file recorded are gone, with whatever records they held`);
  const messagesMayBeLost = repair.dropped.some((d) => !d.looksLike || d.looksLike.startsWith('pub')) || repair.missingBytes > 0 || repair.problems.some((p) => p.startsWith('is missing'));
  if (messagesMayBeLost) {
    lines.push('  cost: a lost message is an output never scored; its run completes only once the output is submitted again');
  }
  if (repair.dropped.some((d) => d.looksLike?.startsWith('ack') || d.looksLike?.startsWith('dup'))) {
    lines.push('  cost: a dropped acknowledgement or duplicate id means a redelivery, which the idempotent consumers absorb');
  }
  return lines;
}
