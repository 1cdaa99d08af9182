import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { readOutputsFile } from '../outputs-file';
import { CliError, EXIT } from '../exit-codes';

/**
 * The files of the judge commands, all JSON Lines on the operator's machine:
 *
 * - items (`evals label --set`, `evals calibrate --items`): `{item_id, case_id?, input?, output}`;
 * - labels (`evals label --out`): `{item_id, output_hash, output_chars, human_verdict}`, one line per answer,
 *   appended as it is given (`human_verdict` pass, fail or skip; the last line of an item wins);
 * - outputs (`evals compare --a/--b`): `{case_id, output}`.
 *
 * A bad line is refused with its file and line number, never its content (it may be an output).
 */
export interface LabelItem {
  readonly item_id: string;
  readonly case_id?: string;
  readonly input?: string;
  readonly output: string;
  /** 1-based line in the items file. */
  readonly line: number;
}

export type HumanVerdict = 'pass' | 'fail' | 'skip';

export interface LabelLine {
  readonly item_id: string;
  readonly output_hash: string;
  readonly output_chars: number;
  readonly human_verdict: HumanVerdict;
}

/** SHA-256 hex of the output's UTF-8 bytes: what a label is bound to (the server checks it again). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;

function readText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(EXIT.USAGE, `cannot read ${what} ${file}`);
  }
}

function lines(text: string): Array<{ line: number; text: string }> {
  return text
    .split('\n')
    .map((t, i) => ({ line: i + 1, text: t.replace(/\r$/, '') }))
    .filter((l) => l.text.trim() !== '');
}

function parseLine(file: string, line: number, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError(EXIT.USAGE, `${file}:${line}: not a JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError(EXIT.USAGE, `${file}:${line}: not a JSON object`);
  return value as Record<string, unknown>;
}

/** Items to label or calibrate: unique ids, an output each; `input` shown (and judged) when present. */
export function loadItems(file: string): LabelItem[] {
  const items: LabelItem[] = [];
  const seen = new Set<string>();
  for (const { line, text } of lines(readText(file, 'items file'))) {
    const o = parseLine(file, line, text);
    if (typeof o.item_id !== 'string' || !ID.test(o.item_id)) throw new CliError(EXIT.USAGE, `${file}:${line}: item_id must be an id (letters, digits, . _ : @ -)`);
    if (seen.has(o.item_id)) throw new CliError(EXIT.USAGE, `${file}:${line}: item_id ${o.item_id} appears twice`);
    seen.add(o.item_id);
    if (o.case_id !== undefined && o.case_id !== null && (typeof o.case_id !== 'string' || !ID.test(o.case_id))) throw new CliError(EXIT.USAGE, `${file}:${line}: case_id must be an id`);
    if (typeof o.output !== 'string') throw new CliError(EXIT.USAGE, `${file}:${line}: output must be a string`);
    const input = o.input === undefined || o.input === null ? undefined : typeof o.input === 'string' ? o.input : JSON.stringify(o.input);
    items.push({
      item_id: o.item_id,
      ...(typeof o.case_id === 'string' ? { case_id: o.case_id } : {}),
      ...(input !== undefined ? { input } : {}),
      output: o.output,
      line,
    });
  }
  if (items.length === 0) throw new CliError(EXIT.USAGE, `${file}: no items`);
  return items;
}

/**
 * The answers recorded so far, in file order (empty when the file does not exist). A torn last line (the
 * process died mid-write) is ignored; a bad line anywhere else is refused.
 */
export function loadLabels(file: string, options: { mustExist?: boolean } = {}): LabelLine[] {
  if (!fs.existsSync(file)) {
    if (options.mustExist) throw new CliError(EXIT.USAGE, `cannot read labels file ${file}`);
    return [];
  }
  const all = lines(readText(file, 'labels file'));
  const out: LabelLine[] = [];
  all.forEach(({ line, text }, i) => {
    let o: Record<string, unknown>;
    try {
      o = parseLine(file, line, text);
    } catch (error) {
      if (i === all.length - 1 && !text.endsWith('}')) return; // torn final write
      throw error;
    }
    if (typeof o.item_id !== 'string') throw new CliError(EXIT.USAGE, `${file}:${line}: item_id missing`);
    if (typeof o.output_hash !== 'string' || !/^[0-9a-f]{64}$/.test(o.output_hash)) throw new CliError(EXIT.USAGE, `${file}:${line}: output_hash must be a SHA-256 hex digest`);
    if (typeof o.output_chars !== 'number' || !Number.isSafeInteger(o.output_chars) || o.output_chars < 0) throw new CliError(EXIT.USAGE, `${file}:${line}: output_chars must be a count`);
    if (o.human_verdict !== 'pass' && o.human_verdict !== 'fail' && o.human_verdict !== 'skip') throw new CliError(EXIT.USAGE, `${file}:${line}: human_verdict must be pass, fail or skip`);
    out.push({ item_id: o.item_id, output_hash: o.output_hash, output_chars: o.output_chars, human_verdict: o.human_verdict });
  });
  return out;
}

/** The last answer per item, in the order items were first answered. */
export function latestLabels(labels: readonly LabelLine[]): Map<string, LabelLine> {
  const out = new Map<string, LabelLine>();
  for (const l of labels) out.set(l.item_id, l);
  return out;
}

/**
 * A run's outputs, for `evals compare`: the outputs file of `evals run` (JSON Lines, a JSON array or
 * pretty-printed, with or without a BOM; errors by the file's line, outputs-file.ts).
 */
export function loadCaseOutputs(file: string): Array<{ case_id: string; output: string }> {
  const out = readOutputsFile(file).map((r) => ({ case_id: r.case_id, output: r.output }));
  if (out.length === 0) throw new CliError(EXIT.USAGE, `${file}: no outputs`);
  return out;
}
