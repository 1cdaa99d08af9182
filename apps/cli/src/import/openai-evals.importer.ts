/**
 * OpenAI Evals samples (JSONL of `{input, ideal}`) to suite cases (issue 29 part 2; docs/suites.md,
 * "Importing"). The eval class decides the scorer, as each class of evals/elsuite/basic decides a sample.
 */
import type { ImportedCase, LeftOut } from './suite-file';

export const EVAL_CLASSES = ['match', 'includes', 'fuzzy-match', 'json-match'] as const;
export type EvalClass = (typeof EVAL_CLASSES)[number];

type Item = ({ readonly name?: string } & ImportedCase) | undefined;

/** RE2 syntax for a literal: every metacharacter escaped. */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

function isMessages(v: unknown): v is { role: unknown; content: unknown }[] {
  return Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'object' && m !== null && typeof (m as { content?: unknown }).content === 'string');
}

function scorerFor(evalClass: EvalClass, ideals: string[], ignoreCase: boolean): { scorer: Record<string, unknown>; expected?: unknown } | { reason: string } {
  switch (evalClass) {
    case 'match':
      // Match: the sampled text starts with one of the ideals.
      return ideals.length === 1 ? { scorer: { type: 'starts_with', value: ideals[0] } } : { scorer: { type: 'regex', pattern: `^(?:${ideals.map(escapeRegex).join('|')})` } };
    case 'includes':
      return { scorer: { type: 'contains_any', value: ideals, ...(ignoreCase ? { ignore_case: true } : {}) } };
    case 'json-match': {
      if (ideals.length !== 1) return { reason: 'json-match with several ideals (one expected value per case)' };
      try {
        return { scorer: { type: 'json_equal' }, expected: JSON.parse(ideals[0]) as unknown };
      } catch {
        return { reason: 'the ideal is not JSON' };
      }
    }
    case 'fuzzy-match':
      return { scorer: { type: 'fuzzy_match', value: ideals } };
  }
}

export function importOpenAiEvals(text: string, evalClass: EvalClass, ignoreCase: boolean): { items: Item[]; leftOut: LeftOut[] } {
  const items: Item[] = [];
  const leftOut: LeftOut[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/).filter((l) => l.trim() !== '');
  lines.forEach((line, i) => {
    const index = i + 1;
    const leave = (reason: string) => {
      leftOut.push({ index, what: 'sample', reason });
      items.push(undefined);
    };
    let sample: unknown;
    try {
      sample = JSON.parse(line);
    } catch {
      return leave('not a JSON object');
    }
    if (typeof sample !== 'object' || sample === null || Array.isArray(sample)) return leave('not a JSON object');
    const { input, ideal, id } = sample as { input?: unknown; ideal?: unknown; id?: unknown };
    const caseInput = typeof input === 'string' && input !== '' ? input : isMessages(input) ? { messages: input } : undefined;
    if (caseInput === undefined) return leave('`input` must be a non-empty string or a list of chat messages');
    const ideals = typeof ideal === 'string' ? [ideal] : Array.isArray(ideal) && ideal.every((x) => typeof x === 'string') ? (ideal as string[]) : undefined;
    if (ideals === undefined || ideals.length === 0 || ideals.some((x) => x === '')) return leave('`ideal` must be a non-empty string or a list of them');
    const mapped = scorerFor(evalClass, ideals, ignoreCase);
    if ('reason' in mapped) return leave(mapped.reason);
    items.push({ ...(typeof id === 'string' ? { name: id } : {}), input: caseInput, ...(mapped.expected !== undefined ? { expected: mapped.expected } : {}), scorer: mapped.scorer });
  });
  return { items, leftOut };
}
