/**
 * What every importer (promptfoo, OpenAI Evals, datasets; issue 29) shares: case ids by the documented rule,
 * the suite object, its validation by the same code as `evals suite validate` (V1, S4), and the YAML text.
 */
import { ID_PATTERN, SUITE_KEY_PATTERN } from '@evals/limits';
import { stringify } from 'yaml';

export interface ImportedCase {
  readonly input: unknown;
  readonly expected?: unknown;
  readonly scorer?: Readonly<Record<string, unknown>>;
  readonly tags?: readonly string[];
}

/** Something of the source left out of the suite, said in the report (and refused without --skip-unsupported). */
export interface LeftOut {
  /** 1-based position of the test / sample / row in the source. */
  readonly index: number;
  readonly description?: string;
  /** The assertion type, or `test` / `sample` / `row` when the whole item is left out. */
  readonly what: string;
  readonly reason: string;
}

/**
 * Case ids: an item's own name (promptfoo's `description`, a dataset's id column) when it is a valid case id
 * used by no other item, else `<prefix>-N` by 1-based position. A name equal to another item's fallback id
 * falls back too, so ids stay unique whatever the names are.
 */
export function assignIds(names: readonly (string | undefined)[], prefix: string): string[] {
  const counts = new Map<string, number>();
  for (const n of names) if (n !== undefined) counts.set(n, (counts.get(n) ?? 0) + 1);
  const own = names.map((n) => n !== undefined && ID_PATTERN.test(n) && counts.get(n) === 1);
  for (;;) {
    const fallbacks = new Set(names.map((_, i) => `${prefix}-${i + 1}`).filter((_, i) => !own[i]));
    let changed = false;
    names.forEach((n, i) => {
      if (own[i] && fallbacks.has(n!)) {
        own[i] = false;
        changed = true;
      }
    });
    if (!changed) break;
  }
  return names.map((n, i) => (own[i] ? n! : `${prefix}-${i + 1}`));
}

/** A suite key from a file name or title: lowercase, other characters as `-`; undefined when nothing is left. */
export function keyFrom(text: string): string | undefined {
  const key = text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .replace(/-+$/, '')
    .slice(0, 128);
  return SUITE_KEY_PATTERN.test(key) ? key : undefined;
}

export interface SuiteParts {
  readonly key: string;
  readonly description: string;
  readonly defaultScorer: Readonly<Record<string, unknown>>;
  readonly cases: readonly (ImportedCase & { readonly id: string })[];
}

/**
 * The suite document. A case whose scorer is the default's (by value) does not repeat it. pass_threshold 1:
 * the source tools pass an eval when every test passes; regression_threshold 0.1, the examples' value.
 */
export function suiteDocument(parts: SuiteParts): Record<string, unknown> {
  const defaultText = JSON.stringify(parts.defaultScorer);
  return {
    key: parts.key,
    description: parts.description,
    default_scorer: parts.defaultScorer,
    pass_threshold: 1,
    regression_threshold: 0.1,
    cases: parts.cases.map((c) => ({
      id: c.id,
      input: c.input,
      ...(c.expected !== undefined ? { expected: c.expected } : {}),
      ...(c.scorer !== undefined && JSON.stringify(c.scorer) !== defaultText ? { scorer: c.scorer } : {}),
      ...(c.tags !== undefined && c.tags.length > 0 ? { tags: c.tags } : {}),
    })),
  };
}

/** YAML the suite parser reads back to the same value (no aliases: repeated specs are written out). */
export function suiteYaml(doc: Record<string, unknown>, header: string): string {
  return `${header}\n${stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 })}`;
}

/** The report lines of what was left out, one per item: `test 3 "refund" assertion javascript: no equivalent`. */
export function describeLeftOut(items: readonly LeftOut[], noun: string): string[] {
  return items.map((l) => `  ${noun} ${l.index}${l.description !== undefined ? ` ${JSON.stringify(l.description)}` : ''}: ${l.what}: ${l.reason}`);
}
