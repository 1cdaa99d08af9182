import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { testBusNames } from '../../../test/support/isolation';
import { InProcessBus } from './in-process.bus';
import { JournalDamagedError, readJournal, stateFileOf } from './journal-file';
import { describeRepair, repairJournals } from './journal-repair';
import { CONSUMERS, streamOf, subjectOf, type BusNames } from './topology';

// Issue 18 part 2: the embedded bus journal detects damage (a flipped byte, a truncation, a deletion) and
// refuses to start on it, naming the file; a torn tail from a crash still recovers; `--repair` says what
// it keeps and drops. On the file system, hence an integration spec.

const dirs: string[] = [];
const buses: InProcessBus[] = [];

afterAll(async () => {
  for (const bus of buses) await bus.close().catch(() => undefined);
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-journal-'));
  dirs.push(dir);
  return dir;
}

function uniqueNames(): BusNames {
  const t = testBusNames('jrn');
  return { streamPrefix: `JRN_${t.suffix}_`, subjectPrefix: `jrn_${t.suffix}` };
}

async function open(names: BusNames, dir: string): Promise<InProcessBus> {
  const bus = await InProcessBus.open(names, { dir });
  buses.push(bus);
  await bus.ensureTopology();
  return bus;
}

/** A directory whose EVALS_WORK journal holds `n` unacknowledged work messages, closed cleanly. */
async function journalWith(n: number): Promise<{ dir: string; names: BusNames; file: string; stream: string }> {
  const dir = newDir();
  const names = uniqueNames();
  const bus = await open(names, dir);
  for (let i = 0; i < n; i++) await bus.publish(subjectOf(names, 'evals.work.score'), JSON.stringify({ case: i, output: `answer ${i}` }), `run-1:score:${i}`);
  await bus.close();
  const stream = streamOf(names, 'EVALS_WORK');
  return { dir, names, file: path.join(dir, `${stream}.journal`), stream };
}

/** The byte offset of the first byte of the payload (`"d":"...`) of the line holding `needle`. */
function offsetInRecord(file: string, needle: string): number {
  const text = fs.readFileSync(file, 'latin1');
  const line = text.indexOf(needle);
  expect(line).toBeGreaterThan(0);
  return text.indexOf('"d":"', line) + 8;
}

async function refusal(names: BusNames, dir: string): Promise<JournalDamagedError> {
  const error = await InProcessBus.open(names, { dir }).then(
    (bus) => {
      buses.push(bus);
      throw new Error('the bus opened');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JournalDamagedError);
  // Refused before anything was taken: the lock is released, so a repair (or a retry) can open it.
  expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false);
  return error as JournalDamagedError;
}

describe('integration: the in-process bus journal detects damage (issue 18)', () => {
  it('refuses a journal with one byte flipped in a record, naming the file and what to do; --repair keeps the rest', async () => {
    const { dir, names, file } = await journalWith(5);
    const offset = offsetInRecord(file, '"id":"run-1:score:2"');
    const bytes = fs.readFileSync(file);
    bytes[offset] ^= 0x01;
    fs.writeFileSync(file, bytes);

    const error = await refusal(names, dir);
    expect(error.code).toBe('JOURNAL_DAMAGED');
    expect(error.file).toBe(file);
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/damaged at line \d+ \(byte \d+\): its checksum does not match/);
    expect(error.message).toContain('evals serve --repair');

    const repairs = await repairJournals(dir);
    const work = repairs.find((r) => r.file === file)!;
    expect(work.keptMessages).toBe(4);
    expect(work.dropped).toHaveLength(1);
    expect(work.dropped[0].looksLike).toContain('id run-1:score:2');
    expect(describeRepair(work).join('\n')).toMatch(/dropped: line \d+ .*run-1:score:2 \(unverified\)[\s\S]*never scored/);
    // The other streams were intact and left as they were.
    expect(repairs.filter((r) => r.file !== file).every((r) => r.problems.length === 0)).toBe(true);

    const bus = await open(names, dir);
    expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(4);
    // Sequences go on after the dropped message's: none is handed out twice.
    expect((await bus.publish(subjectOf(names, 'evals.work.score'), 'next', 'run-2:score:0')).seq).toBe(6);
    await bus.close();
  });

  it('refuses every single flipped byte anywhere in a journal or its state file', async () => {
    const { file, stream } = await journalWith(2);
    await expect(readJournal(file, stream)).resolves.toMatchObject({ format: 2 });
    for (const target of [file, stateFileOf(file)]) {
      const original = fs.readFileSync(target);
      try {
        for (let i = 0; i < original.length; i++) {
          for (const mask of [0x01, 0x20, 0x80]) {
            const copy = Buffer.from(original);
            copy[i] ^= mask;
            fs.writeFileSync(target, copy);
            const outcome = await readJournal(file, stream).then(
              () => 'accepted',
              (e: unknown) => (e instanceof JournalDamagedError && e.file === file ? 'refused' : String(e)),
            );
            if (outcome !== 'refused') throw new Error(`${path.basename(target)} byte ${i} ^ ${mask}: ${outcome}`);
          }
        }
      } finally {
        fs.writeFileSync(target, original);
      }
    }
  }, 60_000);

  it('refuses a deleted journal whose state file records it; --repair starts it empty, sequences going on', async () => {
    const { dir, names, file } = await journalWith(3);
    fs.rmSync(file);
    const error = await refusal(names, dir);
    expect(error.file).toBe(file);
    expect(error.message).toMatch(/is missing, though its state file .* records generation \d+/);

    const [work] = (await repairJournals(dir)).filter((r) => r.file === file);
    expect(work.problems[0]).toMatch(/is missing/);
    expect(describeRepair(work).join('\n')).toMatch(/never scored/);
    const bus = await open(names, dir);
    expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(0);
    expect((await bus.publish(subjectOf(names, 'evals.work.score'), 'next', 'run-2:score:0')).seq).toBe(4);
    await bus.close();
  });

  it('refuses a journal truncated after a clean stop, to zero bytes or to a record boundary', async () => {
    const { dir, names, file } = await journalWith(3);
    const original = fs.readFileSync(file);
    fs.truncateSync(file, 0);
    expect((await refusal(names, dir)).message).toMatch(/is truncated: its records end at byte 0, where its state file records \d+ bytes/);
    // Cut at the end of a whole record: it looks like a journal that simply held less.
    const cut = original.lastIndexOf(0x0a, original.length - 2) + 1;
    fs.writeFileSync(file, original.subarray(0, cut));
    expect((await refusal(names, dir)).message).toMatch(/is truncated/);
    // And its last newline removed: no longer a record boundary, still not a torn tail (the state covers it).
    fs.writeFileSync(file, original.subarray(0, original.length - 1));
    expect((await refusal(names, dir)).message).toMatch(/is truncated/);
  });

  it('refuses a journal truncated below its state after a crash, and still recovers a torn tail', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, dir);
    for (let i = 0; i < 4; i++) await bus.publish(subjectOf(names, 'evals.work.score'), `m${i}`, `run-1:score:${i}`);
    // What a crash leaves: the directory as it is while the bus runs (records appended after the open's rewrite).
    const crashed = newDir();
    const stream = streamOf(names, 'EVALS_WORK');
    for (const name of fs.readdirSync(dir)) if (name.endsWith('.journal') || name.endsWith('.state')) fs.copyFileSync(path.join(dir, name), path.join(crashed, name));
    await bus.close();
    const file = path.join(crashed, `${stream}.journal`);
    const atCrash = fs.readFileSync(file);
    const stateAtCrash = fs.readFileSync(stateFileOf(file));
    const restore = (journal: Buffer) => {
      fs.writeFileSync(file, journal);
      fs.writeFileSync(stateFileOf(file), stateAtCrash);
    };

    // A torn tail: the last write cut by the crash, half a record after the last newline.
    restore(Buffer.concat([atCrash, Buffer.from('{"n":9,"k":"pub","seq":5,"s":"jrn.evals.work.score","id":"run-1:sc')]));
    const recovered = await open(names, crashed);
    expect(await recovered.pending(CONSUMERS.scoringWorker)).toBe(4);
    expect(recovered.streamInfo('EVALS_WORK').lastSeq).toBe(4);
    await recovered.close();

    // The crash image cut below the size its state recorded at the open's rewrite (before any append).
    const recorded = JSON.parse(stateAtCrash.toString('utf8')) as { bytes: number };
    expect(atCrash.length).toBeGreaterThan(recorded.bytes);
    restore(atCrash.subarray(0, recorded.bytes - 1));
    expect((await refusal(names, crashed)).message).toMatch(/is truncated/);
    restore(atCrash.subarray(0, atCrash.lastIndexOf(0x0a, recorded.bytes - 2) + 1));
    expect((await refusal(names, crashed)).message).toMatch(/is truncated/);
    // The documented limit: a cut after it, at a record boundary, is what a crash before those appends leaves.
    restore(atCrash.subarray(0, atCrash.lastIndexOf(0x0a, atCrash.length - 2) + 1));
    const shorter = await open(names, crashed);
    expect(await shorter.pending(CONSUMERS.scoringWorker)).toBe(3);
    await shorter.close();
  });

  it('reads a journal of the previous format (1) and migrates it on open', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const stream = streamOf(names, 'EVALS_WORK');
    const subject = subjectOf(names, 'evals.work.score');
    const d = (s: string) => Buffer.from(s).toString('base64');
    const file = path.join(dir, `${stream}.journal`);
    fs.writeFileSync(
      file,
      [
        { k: 'head', v: 1, lastSeq: 2 },
        { k: 'pub', seq: 3, s: subject, id: 'old:score:3', t: Date.now(), d: d('three') },
        { k: 'pub', seq: 4, s: subject, id: 'old:score:4', t: Date.now(), d: d('four') },
        { k: 'ack', c: CONSUMERS.scoringWorker.durable, q: [3] },
      ]
        .map((r) => JSON.stringify(r) + '\n')
        .join('') + '{"k":"pub","seq":5,"s":"torn',
      { mode: 0o600 },
    );
    const bus = await open(names, dir);
    expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(1);
    expect((await bus.publish(subject, 'five', 'new:score:5')).seq).toBe(5);
    // Already rewritten in format 2 by the open, with a state file.
    const migrated = await readJournal(file, stream).catch((e: unknown) => e);
    expect(migrated).toMatchObject({ format: 2 });
    expect(fs.existsSync(stateFileOf(file))).toBe(true);
    await bus.close();
    const reopened = await open(names, dir);
    expect(await reopened.pending(CONSUMERS.scoringWorker)).toBe(2);
    await reopened.close();
  });

  it("refuses a journal put in another stream's place, or an older copy of its own", async () => {
    const { dir, names, file } = await journalWith(2);
    const original = fs.readFileSync(file);
    const inbound = path.join(dir, `${streamOf(names, 'EVALS_INBOUND')}.journal`);
    fs.copyFileSync(inbound, file);
    expect((await refusal(names, dir)).message).toMatch(new RegExp(`holds the stream ${streamOf(names, 'EVALS_INBOUND')}, not`));
    fs.writeFileSync(file, original);

    // An older copy: the journal as it was, after two more generations were written over it.
    const bus = await open(names, dir);
    await bus.close();
    await (await open(names, dir)).close();
    fs.writeFileSync(file, original);
    expect((await refusal(names, dir)).message).toMatch(/is generation \d+, where its state file records generation \d+: a copy from another time/);
  });
});
