import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { parseOptions, required, type Command, type Io } from '../command';
import { CliError, EXIT, UsageError } from '../exit-codes';
import { styles } from '../format';
import { latestLabels, loadItems, loadLabels, sha256Hex, type HumanVerdict, type LabelItem, type LabelLine } from './jsonl';

/** What `evals label` reads keys from: the process's stdin unless a test gives its own. */
export interface KeyInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?: (mode: boolean) => unknown;
}

/** The Io of the label session: the common one, plus (optionally) the input to read answers from. */
export interface LabelIo extends Io {
  readonly stdin?: KeyInput;
}

/** Answers, one at a time: a single keypress on a terminal, a line otherwise; null when the input ends. */
interface KeySource {
  next(): Promise<string | null>;
  close(): void;
}

function queueSource(): { push(v: string | null): void; source: Omit<KeySource, 'close'> } {
  const queue: Array<string | null> = [];
  let waiting: ((v: string | null) => void) | undefined;
  let ended = false;
  return {
    push(v) {
      if (ended) return;
      if (v === null) ended = true;
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        w(v);
      } else queue.push(v);
    },
    source: {
      next() {
        if (queue.length > 0) return Promise.resolve(queue.shift()!);
        if (ended) return Promise.resolve(null);
        return new Promise((resolve) => (waiting = resolve));
      },
    },
  };
}

/** Raw mode: every keypress is an answer at once; Ctrl-C and Ctrl-D quit (what was saved stays saved). */
function rawKeys(stdin: KeyInput): KeySource {
  const q = queueSource();
  const onData = (chunk: Buffer | string) => {
    for (const ch of chunk.toString()) q.push(ch === '\u0003' || ch === '\u0004' ? 'q' : ch.toLowerCase());
  };
  stdin.setRawMode!(true);
  stdin.on('data', onData);
  stdin.on('end', () => q.push(null));
  stdin.resume();
  return {
    ...q.source,
    close() {
      stdin.removeListener('data', onData);
      stdin.setRawMode!(false);
      stdin.pause();
    },
  };
}

/** Line mode (stdin is a pipe or a file): the first character of each non-empty line is the answer. */
function lineKeys(stdin: KeyInput): KeySource {
  const q = queueSource();
  const rl = readline.createInterface({ input: stdin, terminal: false });
  rl.on('line', (line) => {
    const t = line.trim().toLowerCase();
    if (t !== '') q.push(t);
  });
  rl.on('close', () => q.push(null));
  return { ...q.source, close: () => rl.close() };
}

const ANSWERS: Record<string, HumanVerdict | 'quit'> = { p: 'pass', f: 'fail', s: 'skip', q: 'quit' };

function defaultOut(setFile: string): string {
  const dir = path.dirname(setFile);
  const base = path.basename(setFile).replace(/\.jsonl?$/i, '');
  return path.join(dir, `${base}.labels.jsonl`);
}

/**
 * Appends one answer and forces it to disk before the next item is shown: a session killed at any moment
 * loses at most the answer being typed.
 */
class LabelWriter {
  private readonly fd: number;

  constructor(file: string) {
    this.fd = fs.openSync(file, 'a');
  }

  write(line: LabelLine): void {
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fs.fsyncSync(this.fd);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

function showItem(io: Io, item: LabelItem, index: number, total: number, answered: number, bold: (s: string) => string, dim: (s: string) => string): void {
  io.out('');
  io.out(bold(`progress ${answered}/${total}  -  item ${index + 1} of ${total}: ${item.item_id}${item.case_id ? `  (case ${item.case_id})` : ''}`));
  if (item.input !== undefined) {
    io.out(dim('--- input ---'));
    io.out(item.input);
  }
  io.out(dim(`--- output (${item.output.length} chars) ---`));
  io.out(item.output);
  io.out(dim('---'));
  io.out('does the output meet the rubric?  [p] pass  [f] fail  [s] skip  [q] quit');
}

/**
 * `evals label` (J4): the guided terminal session that builds a human-labelled calibration set. One item at
 * a time - its case id, its input when there is one, and its output, read from the operator's own file on
 * their own machine - answered `p` (pass), `f` (fail), `s` (skip) or `q` (quit). Each answer is appended to
 * the labels file and fsync'ed at once, bound to the output's SHA-256 and length (never its text); a new
 * session resumes after the last answered item. Keypresses in raw mode on a terminal; line by line
 * otherwise, so it can be driven by piped keystrokes.
 */
export const labelCommand: Command = {
  name: 'label',
  summary: 'Label outputs pass/fail by hand, one at a time, to build a calibration set for the judge (J4).',
  usage: 'evals label --set FILE.jsonl [--out LABELS.jsonl]',
  options: [
    '--set FILE.jsonl         items to label: {item_id, case_id?, input?, output} per line (required)',
    '--out LABELS.jsonl       where answers are appended (default: FILE.labels.jsonl beside the set);',
    '                         {item_id, output_hash, output_chars, human_verdict} per line, no output text',
    'keys: p pass, f fail, s skip, q quit (Ctrl-C too); a new session resumes after the last answer',
  ],
  example: 'evals label --set support-triage.items.jsonl --out support-triage.labels.jsonl\nprintf "p\\nf\\nq\\n" | evals label --set items.jsonl',
  async run(args, io: LabelIo) {
    const { values } = parseOptions(args, { set: { type: 'string' }, out: { type: 'string' } });
    const setFile = path.resolve(io.cwd, required(values.set, '--set'));
    const outFile = values.out ? path.resolve(io.cwd, values.out) : defaultOut(setFile);
    if (outFile === setFile) throw new UsageError('--out must not be the --set file');
    const items = loadItems(setFile);
    const s = styles(io.env, io.isTty);

    // Answers already given (the last per item), kept only while they still match the item's output.
    const hashes = new Map(items.map((i) => [i.item_id, sha256Hex(i.output)]));
    const latest = latestLabels(loadLabels(outFile));
    let answered = 0;
    let resumeAt = 0;
    items.forEach((item, i) => {
      const label = latest.get(item.item_id);
      if (!label) return;
      if (label.output_hash !== hashes.get(item.item_id)) {
        io.err(`evals label: item ${item.item_id} changed since it was answered; it will be asked again`);
        return;
      }
      answered++;
      resumeAt = i + 1;
    });
    const total = items.length;
    if (resumeAt > 0) io.out(s.dim(`resuming after item ${resumeAt} of ${total} (${answered} answered in ${path.basename(outFile)})`));

    const stdin: KeyInput = io.stdin ?? process.stdin;
    const interactive = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
    let writer: LabelWriter | undefined;
    let keys: KeySource | undefined;
    const counts = { pass: 0, fail: 0, skip: 0 };
    let quit = false;
    try {
      for (let i = resumeAt; i < total; i++) {
        const item = items[i];
        showItem(io, item, i, total, answered, s.bold, s.dim);
        keys ??= interactive ? rawKeys(stdin) : lineKeys(stdin);
        let answer: HumanVerdict | 'quit' | undefined;
        while (answer === undefined) {
          const key = await keys.next();
          if (key === null) {
            answer = 'quit';
            break;
          }
          answer = ANSWERS[key[0]];
          if (answer === undefined) io.out(`answer p (pass), f (fail), s (skip) or q (quit)`);
        }
        if (answer === 'quit') {
          quit = true;
          break;
        }
        writer ??= new LabelWriter(outFile);
        writer.write({ item_id: item.item_id, output_hash: hashes.get(item.item_id)!, output_chars: item.output.length, human_verdict: answer });
        counts[answer]++;
        answered++;
        io.out(answer === 'pass' ? s.green('-> pass') : answer === 'fail' ? s.red('-> fail') : s.yellow('-> skipped'));
      }
    } finally {
      keys?.close();
      writer?.close();
    }

    const saved = counts.pass + counts.fail + counts.skip;
    io.out('');
    io.out(`saved ${saved} answer(s) this session to ${outFile} (pass ${counts.pass}, fail ${counts.fail}, skip ${counts.skip})`);
    if (quit && answered < total) {
      io.out(`progress ${answered}/${total}: stopped; run the same command again to resume`);
    } else {
      const all = latestLabels(loadLabels(outFile));
      const labelled = [...all.values()].filter((l) => l.human_verdict !== 'skip' && l.output_hash === hashes.get(l.item_id)).length;
      io.out(`progress ${answered}/${total}: every item answered, ${labelled} labelled pass/fail`);
      io.out(s.dim(`next: evals calibrate --labels ${path.relative(io.cwd, outFile) || outFile} --items ${path.relative(io.cwd, setFile) || setFile} --rubric "..."`));
    }
    return EXIT.PASS;
  },
};
