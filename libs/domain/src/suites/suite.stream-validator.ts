import type { CompiledScorer } from '@evals/scorers';
import { SUITE_ERROR_CODES as E, type SuiteError } from './suite-error';
import { SuiteContentHasher } from './suite-hash';
import { MAX_SUITE_CASES } from './suite.limits';
import type { SuiteCase, SuiteDefinition } from './suite.model';
import {
  type Checked,
  type CheckedObject,
  checkJson,
  Collector,
  describeType,
  has,
  isRecord,
  readCase,
  readDescription,
  readGoldenFixtures,
  readKey,
  readScorerSpecShape,
  readThreshold,
  REFUSED,
  reportDefaultAlone,
  ScorerCompilation,
  SUITE_KEYS,
  unknownKeys,
} from './suite.validator';

/** A suite without its cases: what a streamed suite's head row stores. */
export type SuiteHead = Omit<SuiteDefinition, 'cases'>;

export type SuiteStreamResult =
  | { readonly ok: true; readonly head: SuiteHead; readonly case_count: number; readonly content_hash: string }
  | { readonly ok: false; readonly errors: readonly SuiteError[] };

/** One batch's cases as validated: each normalised case and its compiled scorer, or undefined where refused. */
export interface StreamedCases {
  readonly cases: ReadonlyArray<SuiteCase | undefined>;
  readonly scorers: ReadonlyArray<CompiledScorer | undefined>;
}

/**
 * validateSuite case by case (issue 31): `begin` takes the suite with `cases` as a list (possibly empty, or
 * the first cases), `add` the rest in batches, `finish` answers what validateSuite answers for the whole
 * suite - the same problems in the same order - and the content hash. Across cases it keeps only the ids
 * (with their first index), the default scorer's shared issues (with case indexes and ids) and the problems
 * found; never a case's content, so a caller that stores or scores each batch holds one batch at a time.
 *
 * The order is validateSuite's: the JSON checks in the suite's key order (the cases' where `cases` is), the
 * suite's own fields, the cases' fields, then the scorers. So problems are kept by kind and joined at the end.
 */
export class SuiteStreamValidator {
  private readonly jsonBefore: Collector;
  private readonly jsonCases: Collector;
  private readonly jsonAfter: Collector;
  private readonly head: Collector;
  private readonly casesLevel: Collector;
  private readonly caseErrs: Collector;
  private readonly compileErrs: Collector;
  private readonly firstIndexById = new Map<string, number>();
  private readonly hasher = new SuiteContentHasher();
  private compilation: ScorerCompilation | undefined;
  private root: CheckedObject | undefined;
  /** Cases seen; the stream goes on counting beyond MAX_SUITE_CASES (for the message) without reading them. */
  private count = 0;
  /** Whether `cases` is a list to stream (otherwise `add` has nothing to add to). */
  private streaming = false;
  private values: { key?: string; description?: string; pass?: number; regression?: number; golden: boolean; defaultSpec?: SuiteHead['default_scorer'] } = { golden: false };
  private begun = false;

  constructor(private readonly source: string) {
    this.jsonBefore = new Collector(source);
    this.jsonCases = new Collector(source);
    this.jsonAfter = new Collector(source);
    this.head = new Collector(source);
    this.casesLevel = new Collector(source);
    this.caseErrs = new Collector(source);
    this.compileErrs = new Collector(source);
  }

  /** The suite, with its first cases (or none) as `cases`; everything else of it is read here. */
  begin(raw: unknown): StreamedCases {
    if (this.begun) throw new Error('SuiteStreamValidator.begin called twice');
    this.begun = true;
    const proto: unknown = isRecord(raw) ? Object.getPrototypeOf(raw) : undefined;
    if (!isRecord(raw) || (proto !== Object.prototype && proto !== null)) {
      const root = checkJson(raw, [], this.jsonBefore, 0);
      if (root !== REFUSED) {
        this.head.add(E.SUITE_NOT_A_MAPPING, '', `a suite must be a mapping with key, default_scorer, thresholds and cases; got ${describeType(root)}`);
      }
      return { cases: [], scorers: [] };
    }
    // The JSON pass over everything but the cases, split where `cases` is so that its problems keep their place.
    const before: Record<string, unknown> = Object.create(null);
    const after: Record<string, unknown> = Object.create(null);
    let seenCases = false;
    for (const k of Object.keys(raw)) {
      if (k === 'cases') seenCases = true;
      else (seenCases ? after : before)[k] = raw[k];
    }
    const checkedBefore = checkJson(before, [], this.jsonBefore, 0) as CheckedObject;
    const rawCases = raw['cases'];
    let cases: Checked | undefined;
    if (seenCases && !Array.isArray(rawCases)) cases = checkJson(rawCases, ['cases'], this.jsonCases, 1);
    const checkedAfter = checkJson(after, [], this.jsonAfter, 0) as CheckedObject;
    const root: Record<string, Checked> = { ...checkedBefore };
    if (seenCases) root['cases'] = Array.isArray(rawCases) ? [] : (cases as Checked);
    Object.assign(root, checkedAfter);
    this.root = root;

    const errs = this.head;
    unknownKeys(root, SUITE_KEYS, [], errs);
    this.values = {
      key: readKey(root, errs),
      description: readDescription(root, errs),
      pass: readThreshold(root, 'pass_threshold', errs),
      regression: readThreshold(root, 'regression_threshold', errs),
      golden: readGoldenFixtures(root, errs),
      defaultSpec: readScorerSpecShape(root['default_scorer'], ['default_scorer'], true, errs),
    };
    if (!has(root, 'cases')) {
      this.casesLevel.add(E.FIELD_REQUIRED, 'cases', 'a suite needs `cases`, a non-empty list');
    } else if (Array.isArray(rawCases)) {
      this.streaming = true;
      this.compilation = new ScorerCompilation(this.values.defaultSpec, this.compileErrs, false);
      return this.add(rawCases);
    } else if (root['cases'] !== REFUSED) {
      this.casesLevel.add(E.FIELD_INVALID, 'cases', `\`cases\` must be a list, got ${describeType(root['cases'])}`);
    }
    return { cases: [], scorers: [] };
  }

  /** The next cases, in order. */
  add(batch: readonly unknown[]): StreamedCases {
    if (!this.streaming) throw new Error('SuiteStreamValidator.add: the suite has no list of cases to add to');
    const cases: Array<SuiteCase | undefined> = [];
    const scorers: Array<CompiledScorer | undefined> = [];
    for (const raw of batch) {
      const index = this.count++;
      const checked = checkJson(raw, ['cases', index], this.jsonCases, 2);
      // Beyond the limit the suite is refused as a whole (CASES_TOO_MANY), as validateSuite does: only the
      // JSON pass still looks at a case.
      if (index >= MAX_SUITE_CASES) {
        cases.push(undefined);
        scorers.push(undefined);
        continue;
      }
      const read = readCase(checked, index, this.firstIndexById, this.caseErrs);
      const scorer = this.compilation!.add(read);
      const ok = read.value !== undefined && scorer !== undefined;
      if (ok && this.valid()) this.hasher.addCase(read.value!);
      cases.push(ok ? read.value : undefined);
      scorers.push(scorer);
    }
    return { cases, scorers };
  }

  /** Whether nothing is wrong so far (a caller may stop storing batches as soon as it is false). */
  valid(): boolean {
    return [this.jsonBefore, this.jsonCases, this.jsonAfter, this.head, this.casesLevel, this.caseErrs, this.compileErrs].every((c) => c.errors.length === 0);
  }

  finish(): SuiteStreamResult {
    if (!this.begun) throw new Error('SuiteStreamValidator.finish before begin');
    const v = this.values;
    let casesOk = this.streaming;
    if (this.streaming && this.count === 0) {
      this.casesLevel.add(E.CASES_EMPTY, 'cases', 'a suite needs at least one case');
      casesOk = false;
    } else if (this.streaming && this.count > MAX_SUITE_CASES) {
      this.casesLevel.add(E.CASES_TOO_MANY, 'cases', `a suite holds at most ${MAX_SUITE_CASES} cases, got ${this.count}`);
      casesOk = false;
    }
    let complete = false;
    // Without a usable list of cases no case's scorer counts (validateSuite compiles none): only the default alone.
    const scorerErrs = casesOk ? this.compileErrs : new Collector(this.source);
    if (casesOk) {
      complete = this.compilation!.finish() !== undefined;
    } else if (this.root !== undefined && v.defaultSpec !== undefined) {
      reportDefaultAlone(v.defaultSpec, scorerErrs);
    }
    const errors = [
      ...this.jsonBefore.errors,
      ...this.jsonCases.errors,
      ...this.jsonAfter.errors,
      ...this.head.errors,
      ...this.casesLevel.errors,
      ...(casesOk ? this.caseErrs.errors : []),
      ...scorerErrs.errors,
    ];
    if (errors.length > 0 || !complete || v.key === undefined || v.pass === undefined || v.regression === undefined || v.defaultSpec === undefined) {
      return { ok: false, errors };
    }
    const head: SuiteHead = {
      key: v.key,
      ...(v.description !== undefined ? { description: v.description } : {}),
      default_scorer: v.defaultSpec,
      pass_threshold: v.pass,
      regression_threshold: v.regression,
      golden_fixtures: v.golden,
    };
    return { ok: true, head, case_count: this.count, content_hash: this.hasher.digest(head) };
  }
}
