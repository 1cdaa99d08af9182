/**
 * Dataset exports (LangSmith, Braintrust, any JSONL or CSV of input / expected / metadata) to suite cases
 * (issue 29 part 2; docs/suites.md, "Importing"). Columns are dotted paths into a row.
 */
import { parseCsv } from './csv';
import type { ImportedCase, LeftOut } from './suite-file';

export interface DatasetColumns {
  readonly input?: string;
  readonly expected?: string;
  readonly id?: string;
  readonly metadata?: readonly string[];
}

const INPUT_DEFAULTS = ['input', 'inputs', 'question', 'prompt'];
const EXPECTED_DEFAULTS = ['expected', 'expected_output', 'outputs', 'output', 'answer', 'ideal'];
const TAG = /^[a-z0-9][a-z0-9._:-]{0,63}$/;
const MAX_TAGS = 32;

type Item = ({ readonly name?: string } & ImportedCase) | undefined;

function at(row: unknown, dotted: string): unknown {
  if (typeof row === 'object' && row !== null && !Array.isArray(row) && Object.prototype.hasOwnProperty.call(row, dotted)) return (row as Record<string, unknown>)[dotted];
  let v: unknown = row;
  for (const part of dotted.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function firstPresent(rows: readonly unknown[], candidates: readonly string[]): string | undefined {
  return candidates.find((c) => rows.some((r) => at(r, c) !== undefined));
}

/** Tags from metadata: `key:value` for scalar values, lowercased, when they are valid tags (others are dropped). */
function tagsOf(row: unknown, columns: readonly string[]): string[] {
  const tags = new Set<string>();
  for (const column of columns) {
    const value = at(row, column);
    const entries = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.entries(value) : value !== undefined ? [[column, value] as const] : [];
    for (const [k, v] of entries) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
      const tag = `${k}:${String(v)}`.toLowerCase().replace(/\s+/g, '-');
      if (TAG.test(tag)) tags.add(tag);
    }
  }
  return [...tags].sort().slice(0, MAX_TAGS);
}

export function readDatasetRows(text: string, file: string): unknown[] {
  if (/\.csv$/i.test(file)) return parseCsv(text, file).map((r) => r.values);
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.trim() !== '')
    .map(({ l, i }) => {
      try {
        return JSON.parse(l) as unknown;
      } catch {
        throw new Error(`${file}:${i + 1}: not a JSON object`);
      }
    });
}

export function importDataset(rows: readonly unknown[], columns: DatasetColumns): { items: Item[]; leftOut: LeftOut[]; columns: Required<DatasetColumns> } {
  const input = columns.input ?? firstPresent(rows, INPUT_DEFAULTS) ?? 'input';
  const expected = columns.expected ?? firstPresent(rows, EXPECTED_DEFAULTS) ?? 'expected';
  const id = columns.id ?? 'id';
  const metadata = columns.metadata ?? ['metadata'];
  const leftOut: LeftOut[] = [];
  const items = rows.map((row, i): Item => {
    const v = at(row, input);
    const caseInput = typeof v === 'string' ? (v !== '' ? v : undefined) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v === 'object' && v !== null && Object.keys(v).length > 0 ? (Array.isArray(v) ? { items: v } : v) : undefined;
    if (caseInput === undefined) {
      leftOut.push({ index: i + 1, what: 'row', reason: `no non-empty \`${input}\`` });
      return undefined;
    }
    const name = at(row, id);
    const exp = at(row, expected);
    const tags = tagsOf(row, metadata);
    return { ...(typeof name === 'string' || typeof name === 'number' ? { name: String(name) } : {}), input: caseInput, ...(exp !== undefined && exp !== '' ? { expected: exp } : {}), ...(tags.length > 0 ? { tags } : {}) };
  });
  return { items, leftOut, columns: { input, expected, id, metadata } };
}
