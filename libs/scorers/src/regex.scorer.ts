/**
 * `regex` (S1, S2): passes when `pattern` matches somewhere in the output (unanchored unless the pattern
 * anchors itself with `^`, `$`, `\A` or `\z`).
 *
 * - Engine: re2js, a JavaScript port of RE2. Matching is linear in the output length whatever the pattern
 *   (no catastrophic backtracking); the syntax is RE2's, not JavaScript's: `\d`, `\w`, `\s`, `\b` are
 *   ASCII; `$` without `m` matches only at the very end (not before a final newline); `.` without `s`
 *   matches anything but `\n`; write `\x{41}`, not `\u0041`; `(?P<name>...)` and `(?<name>...)` both work;
 *   inline flags `(?i)` work.
 * - `pattern` (required, non-empty string). Compiled at validation. Refused with REGEX_UNSUPPORTED when it
 *   uses what a linear-time engine cannot do (back references, look-ahead, look-behind, atomic groups,
 *   possessive quantifiers, conditionals, recursion), and with REGEX_INVALID when it is malformed
 *   (unbalanced brackets, a repeat count over 1000, a program too large, ...).
 * - `flags` (optional string, default none): any of `i` (case-insensitive, RE2 simple case folding: `ß`
 *   does NOT match `SS` - unlike `ignore_case` of exact/contains), `m` (`^`/`$` at line boundaries, lines
 *   split on `\n` only), `s` (`.` also matches `\n`); each at most once, in any order.
 */
import { RE2JS } from 're2js';
import { ScorerIssueCode, checkOptionKeys, describeType, isAbsent, issue, quote, refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';

export const REGEX_LABELS = ['match', 'no_match'] as const;

export interface RegexConfig {
  readonly pattern: string;
  /** Normalized flags: a subset of `ims`, in that order. */
  readonly flags: string;
  /** The compiled linear-time pattern. */
  readonly compiled: RE2JS;
}

const NAME = 'regex';
const OPTIONS = ['pattern', 'flags'] as const;

/** The options next to `type`, as JSON Schema (the registry's `scorerOptionSchemas`). */
export const REGEX_OPTIONS_SCHEMA = {
  properties: {
    pattern: { type: 'string', minLength: 1, description: 'RE2 syntax, compiled when the suite version is created.' },
    flags: { type: 'string', pattern: '^[ims]{0,3}$', description: 'Any of i, m, s, each at most once.' },
  },
  required: ['pattern'],
} as const;
const FLAG_BITS: Readonly<Record<string, number>> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
};

/**
 * Names the first construct of `pattern` that RE2 does not implement (outside character classes), or
 * undefined. Used only to explain a pattern re2js refused.
 */
export function findUnsupportedConstruct(pattern: string): string | undefined {
  const n = pattern.length;
  let i = 0;
  while (i < n) {
    const c = pattern[i];
    if (c === '\\') {
      const e = pattern[i + 1] ?? '';
      if (/[1-9]/.test(e)) return `a back reference (\\${e})`;
      if (e === 'k' || e === 'g') return `a back reference (\\${e})`;
      i += 2;
      continue;
    }
    if (c === '[') {
      // Skip the class: a leading ']' (or '^]') is literal; escapes and [:name:] are skipped.
      i++;
      if (pattern[i] === '^') i++;
      if (pattern[i] === ']') i++;
      while (i < n && pattern[i] !== ']') {
        if (pattern[i] === '\\') i += 2;
        else if (pattern.startsWith('[:', i)) {
          const end = pattern.indexOf(':]', i + 2);
          i = end < 0 ? i + 1 : end + 2;
        } else i++;
      }
      i++;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith('=')) return 'a look-ahead (?=...)';
      if (rest.startsWith('!')) return 'a negative look-ahead (?!...)';
      if (rest === '<=') return 'a look-behind (?<=...)';
      if (rest === '<!') return 'a negative look-behind (?<!...)';
      if (rest.startsWith('>')) return 'an atomic group (?>...)';
      if (rest.startsWith('(')) return 'a conditional (?(...)...)';
      if (/^(R|[0-9]|[+-][0-9]|&|P>)/.test(rest)) return 'a recursion or subroutine call';
      if (rest.startsWith('|')) return 'a branch reset group (?|...)';
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && pattern[i + 1] === '+') {
      return `a possessive quantifier (${c}+)`;
    }
    i++;
  }
  return undefined;
}

/** Compiled patterns shared between cases (a suite often repeats one pattern). Bounded, oldest evicted. */
const cache = new Map<string, RE2JS>();
const CACHE_LIMIT = 256;

function compile(pattern: string, flags: string): RE2JS {
  const key = `${flags}/${pattern}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let bits = 0;
  for (const f of flags) bits |= FLAG_BITS[f] ?? 0;
  const compiled = RE2JS.compile(pattern, bits);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, compiled);
  return compiled;
}

function engineMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 160 ? `${message.slice(0, 160)}...` : message;
}

export const regexScorer: Scorer<RegexConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: REGEX_LABELS,
  validate(raw) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);

    let flags = '';
    if (!isAbsent(raw, 'flags')) {
      const value = raw['flags'];
      if (typeof value !== 'string') {
        issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'flags', `scorer \`regex\`: \`flags\` must be a string of i, m, s, got ${describeType(value)}`));
      } else {
        const bad = [...value].filter((f) => !(f in FLAG_BITS));
        const repeated = [...value].filter((f, k) => value.indexOf(f) !== k);
        if (bad.length > 0) {
          issues.push(
            issue(ScorerIssueCode.OPTION_INVALID, 'flags', `scorer \`regex\`: \`flags\` takes only i, m and s; ${quote(bad.join(''))} is not allowed`),
          );
        } else if (repeated.length > 0) {
          issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'flags', `scorer \`regex\`: \`flags\` repeats ${quote(repeated.join(''))}`));
        } else {
          flags = ['i', 'm', 's'].filter((f) => value.includes(f)).join('');
        }
      }
    }

    const pattern = raw['pattern'];
    if (isAbsent(raw, 'pattern')) {
      issues.push(issue(ScorerIssueCode.OPTION_MISSING, 'pattern', 'scorer `regex` needs a `pattern`'));
    } else if (typeof pattern !== 'string') {
      issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'pattern', `scorer \`regex\`: \`pattern\` must be a string, got ${describeType(pattern)}`));
    } else if (pattern === '') {
      issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'pattern', 'scorer `regex`: `pattern` must not be empty (it would match every output)'));
    }
    if (issues.length > 0 || typeof pattern !== 'string') return refuse(issues);

    try {
      return { ok: true, config: { pattern, flags, compiled: compile(pattern, flags) } };
    } catch (error) {
      const construct = findUnsupportedConstruct(pattern);
      if (construct !== undefined) {
        return refuse([
          issue(
            ScorerIssueCode.REGEX_UNSUPPORTED,
            'pattern',
            `scorer \`regex\`: the pattern ${quote(pattern)} uses ${construct}, which the linear-time engine (RE2) ` +
              'does not support (S2); rewrite it without back references or look-around',
          ),
        ]);
      }
      return refuse([
        issue(ScorerIssueCode.REGEX_INVALID, 'pattern', `scorer \`regex\`: the pattern ${quote(pattern)} is not valid RE2 syntax: ${engineMessage(error)}`),
      ]);
    }
  },
  score(output, config) {
    return config.compiled.test(output) ? pass('match') : fail('no_match');
  },
};
