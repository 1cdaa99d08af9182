/**
 * `contains_json` (S1): passes when some part of the output is a JSON object (promptfoo's `contains-json`
 * without a schema, issue 29).
 *
 * Found as promptfoo finds it (extractJsonObjects): from each `{`, braces are counted naively (braces inside
 * strings count too) up to the first point where they balance; that span must be one JSON object text
 * (`checkJson`). If it is not, the search moves on to the next `{`. Spans are at most 100,000 code units.
 * On purpose stricter than promptfoo (docs/suites.md, "Importing"): promptfoo parses the span as YAML (so
 * `{a: 1}` counts), closes a span left open at the end of the output, and rewrites `//` comments.
 */
import { ScorerIssueCode, checkOptionKeys, issue, refuse } from './issues';
import { checkJson } from './json';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';

export const CONTAINS_JSON_LABELS = ['json_found', 'no_json'] as const;

const NAME = 'contains_json';
const MAX_SPAN = 100_000;

export type ContainsJsonConfig = Readonly<Record<string, never>>;

export const CONTAINS_JSON_OPTIONS_SCHEMA = { properties: {} } as const;

/** Whether some balanced `{...}` span of `text` is a JSON object. */
export function findsJsonObject(text: string): boolean {
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) {
    let depth = 1;
    const end = Math.min(text.length, i + MAX_SPAN);
    for (let j = i + 1; j < end; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x7b) depth++;
      else if (c === 0x7d && --depth === 0) {
        const found = checkJson(text.slice(i, j + 1));
        if (found.valid && found.kind === 'object') return true;
        break;
      }
    }
  }
  return false;
}

export const containsJsonScorer: Scorer<ContainsJsonConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: [],
  labels: CONTAINS_JSON_LABELS,
  validate(raw) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, [], issues);
    return issues.length > 0 ? refuse(issues) : { ok: true, config: {} };
  },
  score(output) {
    return findsJsonObject(output) ? pass('json_found') : fail('no_json');
  },
};
