import { promises as fsp } from 'node:fs';
import { MAX_MESSAGE_BYTES } from '@evals/contracts';
import { Durable, subjectMatches, type StoredMessage } from './in-process.consumer';
import {
  acquireLock,
  journalFileOf,
  pubRecordBytes,
  readJournal,
  removeLeftoverTemporaries,
  StreamJournal,
  type JournalOwner,
  type JournalRecord,
} from './in-process.journal';
import type { ConsumeOptions, MessageBus, PublishAck, Subscription } from './message-bus.port';
import { CONSUMERS, STREAMS, streamOf, subjectOf, type BusNames, type ConsumerSpec, type StreamName, type StreamSpec } from './topology';

export interface InProcessBusOptions {
  /**
   * Journal directory: messages survive a restart (and a crash of the process), at least once. Absent:
   * memory only. One bus per directory at a time (lock file).
   */
  readonly dir?: string;
  /** Time for the duplicate window and max age (the process clock by default). */
  readonly clock?: { now(): Date } | (() => number);
  /** De-duplication window by message id, seconds (120, as the JetStream streams). */
  readonly duplicateWindowSeconds?: number;
  /**
   * Messages kept per stream once every durable of the stream has acknowledged them (limits retention),
   * oldest-acknowledged dropped first; they also go at the stream's max age. Bounds EVALS_OUTBOUND, which
   * nobody consumes in embedded mode. Default 10 000.
   */
  readonly maxAckedPerStream?: number;
  /**
   * Compact a journal while running once more than this is dead (1 MiB): on a work-queue stream as soon as
   * the deleted messages' records exceed it (acknowledged candidate outputs, D1), on a limits stream once the
   * dead records also outweigh the rest of the file.
   */
  readonly compactAfterDeadBytes?: number;
  /** fsync every group commit: survives power loss, not only a crash of the process. Off by default, like JetStream. */
  readonly fsync?: boolean;
  /** Overrides every consumer's ackWaitSeconds (tests). */
  readonly ackWaitMs?: number;
  /**
   * Larger payloads are refused, as NATS refuses those over its max_payload. Default MAX_MESSAGE_BYTES
   * (@evals/contracts, 8 MiB), the max_payload the deployment's NATS is configured with.
   */
  readonly maxPayloadBytes?: number;
  /** How often expired acknowledged messages are swept (60 s). */
  readonly sweepIntervalMs?: number;
}

export interface InProcessStreamInfo {
  readonly messages: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly journalBytes: number;
  readonly journalWrites: number;
  readonly compactions: number;
}

const encoder = new TextEncoder();

/**
 * The embedded all-in-one's bus (one process, no NATS), with JetStream's semantics as the apps rely on them:
 * the streams and durables of topology.ts, per-stream sequences, de-duplication by message id, explicit
 * acknowledgement with redelivery, workqueue and limits retention. `message-bus.contract.ts` runs against
 * both adapters.
 */
export class InProcessBus implements MessageBus {
  private readonly streams: InProcessStream[];
  private readonly subscriptions = new Set<Subscription>();
  private topologyReady = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly sweeper: NodeJS.Timeout;

  private constructor(
    readonly names: BusNames,
    private readonly options: InProcessBusOptions,
    private readonly now: () => number,
    private readonly releaseLock: (() => Promise<void>) | undefined,
  ) {
    this.streams = STREAMS.map((spec) => new InProcessStream(names, spec, options, now));
    this.sweeper = setInterval(() => {
      for (const stream of this.streams) stream.trim(this.now(), true);
    }, options.sweepIntervalMs ?? 60_000).unref();
  }

  static async open(names: BusNames, options: InProcessBusOptions = {}): Promise<InProcessBus> {
    const clock = options.clock;
    const now = typeof clock === 'function' ? clock : clock ? () => clock.now().getTime() : () => Date.now();
    if (!options.dir) return new InProcessBus(names, options, now, undefined);
    await fsp.mkdir(options.dir, { recursive: true, mode: 0o700 });
    const release = await acquireLock(options.dir);
    const bus = new InProcessBus(names, options, now, release);
    try {
      await removeLeftoverTemporaries(options.dir);
      for (const stream of bus.streams) await stream.openJournal(options.dir);
    } catch (error) {
      await bus.close().catch(() => undefined);
      throw error;
    }
    return bus;
  }

  /** Streams and durables exist from the start; like JetStream, nothing is published or consumed before this. */
  async ensureTopology(): Promise<void> {
    this.assertOpen();
    this.topologyReady = true;
  }

  async publish(subject: string, payload: Uint8Array | string, messageId: string): Promise<PublishAck> {
    this.assertOpen();
    const stream = this.topologyReady ? this.streams.find((s) => s.takes(subject)) : undefined;
    if (!stream) throw new Error(`InProcessBus: no stream takes subject ${subject} (no responders)`);
    const data = typeof payload === 'string' ? encoder.encode(payload) : payload;
    const limit = this.options.maxPayloadBytes ?? MAX_MESSAGE_BYTES;
    if (data.byteLength > limit) throw new Error(`InProcessBus: payload of ${data.byteLength} bytes exceeds the maximum of ${limit}`);
    // A string's encoding is ours alone; a caller's array is copied, as the caller may reuse it.
    return stream.publish(subject, data, messageId || null, typeof payload === 'string');
  }

  async consume(consumer: ConsumerSpec, options: ConsumeOptions): Promise<Subscription> {
    this.assertOpen();
    const durable = this.durable(consumer);
    const subscription = durable.subscribe(options);
    // Tracked so close() can stop it; a subscription stopped by its owner is forgotten.
    const tracked: Subscription = {
      get busy() {
        return subscription.busy;
      },
      stop: async () => {
        await subscription.stop();
        this.subscriptions.delete(tracked);
      },
    };
    this.subscriptions.add(tracked);
    return tracked;
  }

  async allAcknowledgedBefore(consumer: ConsumerSpec, seq: number): Promise<boolean> {
    return this.durable(consumer).allAcknowledgedBefore(seq);
  }

  async pending(consumer: ConsumerSpec): Promise<number> {
    return this.durable(consumer).unacked.size;
  }

  get healthy(): boolean {
    return !this.closed && this.streams.every((s) => !s.journal?.failure);
  }

  /** Not part of the port: the state of one stream (tests, diagnostics). */
  streamInfo(stream: StreamName): InProcessStreamInfo {
    return this.streams.find((s) => s.spec.name === stream)!.info();
  }

  /** Stops every subscription gracefully, writes and compacts the journals, releases the directory. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      clearInterval(this.sweeper);
      await Promise.all([...this.subscriptions].map((s) => s.stop()));
      for (const stream of this.streams) stream.dispose();
      await Promise.all(this.streams.map((s) => s.journal?.close()));
      await this.releaseLock?.();
    })();
    return this.closing;
  }

  private durable(consumer: ConsumerSpec): Durable {
    this.assertOpen();
    const durable = this.topologyReady
      ? this.streams.find((s) => s.spec.name === consumer.stream)?.durables.find((d) => d.spec.durable === consumer.durable)
      : undefined;
    if (!durable) throw new Error(`InProcessBus: consumer ${consumer.durable} not found on stream ${consumer.stream}`);
    return durable;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('InProcessBus: the bus is closed');
  }
}

/**
 * A message id inside the duplicate window. It answers a repeated publish at once (one still being written
 * waits for `stored`), but it counts - in a compacted journal's `dup` records - only once its message is
 * `written`: a `dup` for a message the journal does not hold would turn the publisher's retry after a crash
 * (or a failed write) into a duplicate, and the message would never be stored.
 */
interface DedupEntry {
  readonly seq: number;
  readonly time: number;
  written: boolean;
  stored: Promise<void>;
}

/** One stream: its messages, sequence, duplicate window, durables and journal. */
class InProcessStream implements JournalOwner {
  readonly name: string;
  readonly durables: Durable[];
  journal: StreamJournal | undefined;
  private readonly subjects: string[];
  private readonly workQueue: boolean;
  private readonly messages = new Map<number, StoredMessage>();
  /** Insertion order is publish order, so expired entries are at the front. */
  private readonly dedup = new Map<string, DedupEntry>();
  /** Messages every durable has acknowledged, kept under the limits (oldest-acknowledged first). */
  private readonly acknowledged = new Set<number>();
  private lastSeq = 0;
  /** The last sequence written (lastSeq counts publishes still being written too): what a snapshot's head records. */
  private writtenSeq = 0;
  /** Bytes of the publish records of messages deleted since the last snapshot: dead in the journal file. */
  deadPayloadBytes = 0;

  constructor(
    names: BusNames,
    readonly spec: StreamSpec,
    private readonly options: InProcessBusOptions,
    private readonly now: () => number,
  ) {
    this.name = streamOf(names, spec.name);
    this.subjects = spec.subjects.map((s) => subjectOf(names, s));
    this.workQueue = spec.retention === 'workqueue';
    const ackWait = (c: ConsumerSpec) => options.ackWaitMs ?? c.ackWaitSeconds * 1000;
    this.durables = (Object.values(CONSUMERS) as ConsumerSpec[])
      .filter((c) => c.stream === spec.name)
      .map(
        (c) =>
          new Durable(
            c,
            c.filterSubject ? subjectOf(names, c.filterSubject) : null,
            ackWait(c),
            (msg, durable) => this.onAcknowledged(msg, durable),
            () => this.journal?.flushed() ?? Promise.resolve(),
          ),
      );
  }

  takes(subject: string): boolean {
    return !/[*>\s]/.test(subject) && this.subjects.some((pattern) => subjectMatches(pattern, subject));
  }

  async publish(subject: string, data: Uint8Array, messageId: string | null, owned = false): Promise<PublishAck> {
    const now = this.now();
    this.expireDuplicates(now);
    const seen = messageId === null ? undefined : this.dedup.get(messageId);
    if (seen) {
      await seen.stored;
      return { seq: seen.seq, duplicate: true };
    }
    const seq = ++this.lastSeq;
    const record = { k: 'pub', seq, s: subject, id: messageId, t: now, d: base64(data) } as const;
    const msg: StoredMessage = { seq, subject, data: owned ? data : Uint8Array.from(data), messageId, time: now, bytes: pubRecordBytes(record), waiting: 0 };
    const entry: DedupEntry = { seq, time: now, written: false, stored: Promise.resolve() };
    const written = () => {
      entry.written = true;
      this.store(msg);
    };
    // Consumers see it once it is written, as JetStream delivers only what it stored.
    entry.stored = this.journal ? this.journal.append(record, written) : Promise.resolve(written());
    // In the map at once, so a repeat while it is being written waits for it instead of storing it twice.
    if (messageId !== null) this.dedup.set(messageId, entry);
    try {
      await entry.stored;
    } catch (error) {
      // Not stored: a retry with the same id must store it.
      if (messageId !== null && this.dedup.get(messageId) === entry) this.dedup.delete(messageId);
      throw error;
    }
    return { seq, duplicate: false };
  }

  private store(msg: StoredMessage): void {
    this.messages.set(msg.seq, msg);
    this.writtenSeq = Math.max(this.writtenSeq, msg.seq);
    const interested = this.durables.filter((d) => d.matches(msg.subject));
    msg.waiting = interested.length;
    // Nobody will ever acknowledge it: kept under the limits like an acknowledged one.
    if (interested.length === 0) this.acknowledged.add(msg.seq);
    for (const durable of interested) durable.offer(msg);
    this.trim(msg.time, false);
  }

  private onAcknowledged(msg: StoredMessage, durable: Durable): void {
    this.journal?.appendAck(durable.spec.durable, msg.seq);
    if (--msg.waiting > 0) return;
    if (this.workQueue) {
      this.remove(msg.seq);
    } else {
      this.acknowledged.add(msg.seq);
      this.trim(this.now(), false);
    }
  }

  /**
   * Limits retention for acknowledged messages: the count cap, then the max age. A message some durable has
   * not acknowledged stays whatever its age. `full` scans them all (the periodic sweep). Otherwise the scan
   * stops at the first one young enough - approximate: `acknowledged` is in acknowledgement order, not publish
   * order, so an older message acknowledged after a younger one can stay past its max age until the next
   * full sweep (sweepIntervalMs) or until the scan reaches it.
   */
  trim(now: number, full: boolean): void {
    const cap = this.options.maxAckedPerStream ?? 10_000;
    for (const seq of this.acknowledged) {
      if (this.acknowledged.size <= cap) break;
      this.remove(seq);
    }
    const maxAgeMs = this.spec.maxAgeSeconds * 1000;
    if (maxAgeMs <= 0) return;
    for (const seq of this.acknowledged) {
      if (this.messages.get(seq)!.time + maxAgeMs <= now) this.remove(seq);
      else if (!full) break;
    }
  }

  private remove(seq: number): void {
    const msg = this.messages.get(seq);
    if (!msg) return;
    this.messages.delete(seq);
    this.acknowledged.delete(seq);
    this.deadPayloadBytes += msg.bytes;
  }

  private expireDuplicates(now: number): void {
    const windowMs = (this.options.duplicateWindowSeconds ?? 120) * 1000;
    for (const [id, entry] of this.dedup) {
      if (entry.time + windowMs > now) break;
      this.dedup.delete(id);
    }
  }

  async openJournal(dir: string): Promise<void> {
    const file = journalFileOf(dir, this.name);
    // Refuses (JournalDamagedError) a damaged, truncated or missing journal: journal-file.ts.
    const contents = await readJournal(file, this.name);
    this.replay(contents.records);
    this.journal = await StreamJournal.open(file, this, {
      stream: this.name,
      gen: contents.gen,
      fsync: this.options.fsync ?? false,
      compactAfterDeadBytes: this.options.compactAfterDeadBytes ?? 1024 * 1024,
      workQueue: this.workQueue,
    });
  }

  /** Rebuilds the stream from its journal: what a durable had not acknowledged is delivered again. */
  private replay(records: ReadonlyArray<{ record: JournalRecord; bytes: number }>): void {
    const published: StoredMessage[] = [];
    const acks = new Map<string, Set<number>>();
    const ids: Array<{ id: string; seq: number; time: number }> = [];
    for (const { record, bytes } of records) {
      switch (record.k) {
        case 'head':
          this.lastSeq = Math.max(this.lastSeq, record.lastSeq);
          break;
        case 'pub':
          this.lastSeq = Math.max(this.lastSeq, record.seq);
          published.push({ seq: record.seq, subject: record.s, data: Buffer.from(record.d, 'base64'), messageId: record.id, time: record.t, bytes, waiting: 0 });
          if (record.id !== null) ids.push({ id: record.id, seq: record.seq, time: record.t });
          break;
        case 'ack':
          if (!acks.has(record.c)) acks.set(record.c, new Set());
          for (const seq of record.q) acks.get(record.c)!.add(seq);
          break;
        case 'dup':
          ids.push({ id: record.id, seq: record.seq, time: record.t });
          break;
      }
    }
    this.writtenSeq = this.lastSeq;
    ids.sort((a, b) => a.time - b.time);
    for (const { id, seq, time } of ids) this.dedup.set(id, { seq, time, written: true, stored: Promise.resolve() });
    this.expireDuplicates(this.now());

    for (const msg of published) {
      const interested = this.durables.filter((d) => d.matches(msg.subject));
      const owing = interested.filter((d) => !acks.get(d.spec.durable)?.has(msg.seq));
      if (owing.length === 0 && interested.length > 0 && this.workQueue) continue;
      msg.waiting = owing.length;
      this.messages.set(msg.seq, msg);
      if (owing.length === 0) this.acknowledged.add(msg.seq);
      for (const durable of owing) durable.offer(msg);
    }
    this.trim(this.now(), true);
  }

  snapshot(): JournalRecord[] {
    this.deadPayloadBytes = 0;
    const records: JournalRecord[] = [{ k: 'head', v: 1, lastSeq: this.writtenSeq }];
    // Ids of deleted messages still in the window; a kept message carries its own id, and one still being
    // written (it may yet fail) none: its record follows this snapshot in the new file, or it is not stored.
    for (const [id, entry] of this.dedup) {
      if (entry.written && !this.messages.has(entry.seq)) records.push({ k: 'dup', id, seq: entry.seq, t: entry.time });
    }
    for (const msg of this.messages.values()) {
      records.push({ k: 'pub', seq: msg.seq, s: msg.subject, id: msg.messageId, t: msg.time, d: base64(msg.data) });
    }
    for (const durable of this.durables) {
      const acked = [...this.messages.values()].filter((m) => durable.matches(m.subject) && !durable.unacked.has(m.seq)).map((m) => m.seq);
      if (acked.length > 0) records.push({ k: 'ack', c: durable.spec.durable, q: acked });
    }
    return records;
  }

  info(): InProcessStreamInfo {
    return {
      messages: this.messages.size,
      firstSeq: this.messages.keys().next().value ?? this.lastSeq + 1,
      lastSeq: this.lastSeq,
      journalBytes: this.journal?.fileBytes ?? 0,
      journalWrites: this.journal?.writes ?? 0,
      compactions: this.journal?.compactions ?? 0,
    };
  }

  /** Stops every redelivery timer (closing). */
  dispose(): void {
    for (const durable of this.durables) durable.dispose();
  }
}

/** Base64 of the bytes, read in place (Buffer.from(array) would copy them first). */
function base64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}
