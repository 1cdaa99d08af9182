import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseOutputs } from './outputs-file';
import { streamOutputs, streamOutputsFile, type TextSource } from './outputs-stream';

/** The text in pieces of `size` characters, as a file read in chunks would give it. */
function pieces(text: string, size: number): TextSource {
  let at = 0;
  return { read: () => (at >= text.length ? null : text.slice(at, (at += size))) };
}

function outcome(run: () => Iterable<{ case_id: string; output: string; line: number }>): unknown {
  try {
    return { rows: [...run()].map((r) => [r.case_id, r.output, r.line]) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const rows = [
  { case_id: 'a', output: 'one' },
  { case_id: 'b', output: 'two\nwith "quotes" and } ] brackets' },
  { case_id: 'c', output: '\u20ac three' },
];

// Every layout and every refusal parseOutputs is tested with (cli-rough-edges.spec.ts), and a few more.
const TEXTS: Array<[string, string]> = [
  ['JSON Lines', rows.map((r) => JSON.stringify(r)).join('\n') + '\n'],
  ['JSON Lines, CRLF and blank lines', rows.map((r) => JSON.stringify(r)).join('\r\n\r\n')],
  ['an array on one line', JSON.stringify(rows)],
  ['a pretty-printed array', JSON.stringify(rows, null, 2)],
  ['pretty-printed objects (jq .)', rows.map((r) => JSON.stringify(r, null, 2)).join('\n')],
  ['an empty array', ' [ ] \n'],
  ['an empty file', ''],
  ['only space', '  \n\n '],
  ['a bad field in an array', ['[', '  {"case_id": "a", "output": "ok"},', '  {"case_id": "c", "outputs": "CANARY-7"}', ']'].join('\n')],
  ['broken JSON Lines', ['{"case_id": "a", "output": "ok"}', '{"case_id": "b", "output": "CANARY-7"', '{"case_id": "c", "output": "x"}'].join('\n')],
  ['broken pretty-printed', ['{', '  "case_id": "a",', '  "output": "ok"', '}', '{', '  "case_id": "b",', '  "output": CANARY', '}'].join('\n')],
  ['a missing comma', '[{"case_id": "a", "output": "x"} {"case_id": "b", "output": "y"}]'],
  ['a duplicate', '{"case_id": "a", "output": "x"}\n{"case_id": "a", "output": "y"}\n'],
  ['a string element', '["x"]'],
  ['a bad id', '{"case_id": "a b", "output": "x"}'],
  ['an unclosed array', '[\n{"case_id": "a", "output": "x"},\n{"case_id": "b", "output": "y"}\n'],
  ['text after the array', '[{"case_id": "a", "output": "x"}]\n\nnope'],
  ['an unclosed object', '{\n "case_id": "a",\n "output": "x"\n'],
  ['a scalar in a document', '{\n"case_id": "a", "output": "x"}\n12345\n'],
];

describe('unit: the outputs file as a stream (issue 15) reads and refuses exactly as parseOutputs', () => {
  it.each(TEXTS)('%s, in pieces of 1 to 9 characters and whole, with and without a BOM', (_name, text) => {
    for (const prefix of ['', '\uFEFF']) {
      const expected = outcome(() => parseOutputs(prefix + text, 'o.json'));
      for (const size of [1, 2, 3, 5, 9, 1 << 20]) {
        expect(outcome(() => streamOutputs(pieces(prefix + text, size), 'o.json'))).toEqual(expected);
      }
    }
  });

  it('a file of 20 000 outputs in 64 KiB chunks: every row, in order, with its line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-stream-'));
    try {
      const file = path.join(dir, 'o.jsonl');
      const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ case_id: `case-${i}`, output: `answer ${i} \u20ac`.repeat(1 + (i % 7)) }));
      fs.writeFileSync(file, lines.join('\n'));
      let n = 0;
      const wrong: unknown[] = [];
      for (const r of streamOutputsFile(file, 64 * 1024)) {
        if (r.line !== n + 1 || r.case_id !== `case-${n}` || r.output !== JSON.parse(lines[n]!).output) wrong.push([n, r.line, r.case_id]);
        n++;
      }
      expect(wrong).toEqual([]);
      expect(n).toBe(20_000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
