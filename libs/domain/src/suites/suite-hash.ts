import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import type { SuiteCase, SuiteDefinition } from './suite.model';

/**
 * Domain separation: the hashed text starts with this tag, so a suite hash can never equal the hash of
 * some other canonical JSON (a judge cache key, say), and a future change of the canonical form gets a new
 * tag instead of silently different hashes.
 */
export const SUITE_HASH_SCHEME = 'evals.suite.content.v1';

export const SUITE_HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The content hash of a suite version (V2): lowercase hex SHA-256 of the scheme tag, a newline, and the
 * canonical JSON of the whole normalised suite: key, description, default scorer, both thresholds,
 * golden_fixtures and every case (id, input, expected, scorer, tags) in authored order.
 *
 * Everything authored is covered, not only what changes a score: a version is an immutable snapshot of
 * the suite, so two suites that differ in anything (a description included) must never share a version
 * and its hash. YAML formatting, key order, comments, quoting style, anchors and number spelling (1.0 vs
 * 1) change nothing; defaults applied by validateSuite (golden_fixtures: false, tag order) change nothing.
 * Scorer options are hashed as written: `ignore_case: false` spelled out is different content from
 * leaving it to the scorer's default (the defaults belong to @evals/scorers and may change with a scorer
 * version).
 */
export function suiteContentHash(suite: SuiteDefinition): string {
  const hasher = new SuiteContentHasher();
  for (const c of suite.cases) hasher.addCase(c);
  return hasher.digest(suite);
}

/**
 * suiteContentHash fed case by case (issue 15: a 100 000-case suite's canonical text is never built whole;
 * issue 31: nor its cases held, when a push streams them). `cases` sorts first among the canonical keys,
 * so the text is `{"cases":[...],` and then the rest of the object's canonical JSON without its brace.
 */
export class SuiteContentHasher {
  private readonly hash = createHash('sha256').update(`${SUITE_HASH_SCHEME}\n{"cases":[`, 'utf8');
  private count = 0;

  addCase(c: SuiteCase): void {
    this.hash.update(`${this.count++ > 0 ? ',' : ''}${canonicalJson(caseContent(c))}`, 'utf8');
  }

  /** The hash, given everything but the cases (which are ignored here: they were added). */
  digest(head: Omit<SuiteDefinition, 'cases'>): string {
    return this.hash.update(`],${canonicalJson(hashContent({ ...head, cases: [] }, false)).slice(1)}`, 'utf8').digest('hex');
  }
}

/** The exact text `suiteContentHash` hashes: to see why two hashes differ, diff these. */
export function suiteHashInput(suite: SuiteDefinition): string {
  return `${SUITE_HASH_SCHEME}\n${canonicalJson(hashContent(suite, true))}`;
}

function hashContent(suite: SuiteDefinition, withCases: boolean): Record<string, unknown> {
  return {
    key: suite.key,
    description: suite.description,
    default_scorer: suite.default_scorer,
    pass_threshold: suite.pass_threshold,
    regression_threshold: suite.regression_threshold,
    golden_fixtures: suite.golden_fixtures,
    ...(withCases ? { cases: suite.cases.map(caseContent) } : {}),
  };
}

function caseContent(c: SuiteDefinition['cases'][number]): Record<string, unknown> {
  return { id: c.id, input: c.input, expected: c.expected, scorer: c.scorer, tags: c.tags };
}
