import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isSafeId, isSuiteKey } from '@evals/contracts';
import {
  CalibrationTargetError,
  JudgeError,
  MIN_CALIBRATION_TARGETS,
  calibrate,
  calibrationScopeOf,
  checkCalibrationSet,
  clampChars,
  compileSuite,
  judgePassed,
  judgeRequestFor,
  resolveCalibrationTargets,
  type CalibrationReport,
  type CalibrationScope,
  type CalibrationSetCheck,
  type CalibrationTargets,
  type CompiledSuite,
  type JudgeErrorCode,
  type JudgeRequest,
} from '@evals/domain';
import type { LangChainJudge } from '@evals/judge';
import {
  CalibrationRepository,
  JudgeStatusRepository,
  SuiteVersions,
  judgeCorrectedPassRate,
  type CalibrationItemRecord,
  type CalibrationSetRecord,
  type Sql,
} from '@evals/persistence';
import { ApiError, type ApiErrorCode } from '@evals/platform';
import { DEFAULT_MIN_SCORE } from '@evals/scorers';
import { REGRESSION_JUDGE } from './calibration.judge';
import { calibrationRepeats, measureSelfAgreement, type CalibrationSelfAgreement } from './calibration-repeats';

/** D4: the most characters of a golden output (or input) the handler writes. */
export const MAX_GOLDEN_CHARS = 4_000;
export const MAX_CALIBRATION_ITEMS = 5_000;
const MAX_RUBRIC_CHARS = 20_000;
const MAX_OUTPUT_CHARS = 512 * 1024;
const HASH = /^[0-9a-f]{64}$/;

/** A refusal: the code's HTTP status comes from the platform's one catalogue (API_ERROR_CODES). */
export function fail(code: ApiErrorCode, message: string, field?: string, details?: Record<string, unknown>): never {
  throw new ApiError(code, message, field, details);
}

/** SHA-256 hex of a text's UTF-8 bytes: how `evals label` names the output a human labelled. */
export function outputHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}

/** One item as the calibration judges it: the text lives only in memory, for the length of the request (D1). */
interface JudgeableItem {
  readonly record: CalibrationItemRecord;
  readonly request: JudgeRequest;
  readonly minScore: number;
}

export interface CalibrationAnswer {
  readonly report_id: string;
  readonly set_id: string;
  readonly status: CalibrationReport['status'];
  readonly judge_model: string;
  readonly prompt_version: string;
  /** What the report certifies, or would (J4): `rubric:<sha256>` or `suite:<key>`. */
  readonly scope: CalibrationScope;
  readonly created_at: string | undefined;
  readonly report: StoredCalibrationReport | InsufficientSetReport;
}

/** The judge's cost of a report: nothing at all for a refused set. */
interface JudgeSpend {
  readonly model: string;
  readonly prompt_version: string;
  readonly calls: number;
  readonly unparseable: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cost_usd: number;
}

/**
 * A set refused before any judge call (J4): too few items, too few in a human class, or one class only. Stored
 * as evidence of the attempt; it never displaces a measured report of its scope.
 */
export interface InsufficientSetReport {
  readonly status: 'insufficient_set';
  readonly n: number;
  readonly set: CalibrationSetCheck;
  readonly targets: CalibrationTargets;
  readonly reasons: CalibrationSetCheck['reasons'];
  readonly set_id: string;
  readonly scope: CalibrationScope;
  readonly judge: JudgeSpend;
  readonly items: readonly [];
}

/** What a calibration report stores (append-only): the metrics, the per-item verdicts (no text), the cost. */
export interface StoredCalibrationReport extends CalibrationReport {
  readonly set_id: string;
  readonly scope: CalibrationScope;
  readonly judge: JudgeSpend;
  readonly items: ReadonlyArray<{ readonly item_id: string; readonly human: 'pass' | 'fail'; readonly judge: 'pass' | 'fail'; readonly label: string }>;
  /** Issue 13: with `repeats`, the judge's agreement with itself beside its agreement with the humans. */
  readonly self_agreement?: CalibrationSelfAgreement;
}

/**
 * Calibration (J4): human-labelled sets (from `evals label`), the judge measured against them, the report
 * stored as append-only evidence, and a judge pin's status for the gate (GT1).
 *
 * Minimal data (D1, D4): an item is its output's SHA-256 and length. Only a set marked golden keeps text,
 * clamped to 4 000 characters here, before writing. For any other set the outputs come with the calibration
 * request, are checked against the labelled hashes, judged, and forgotten. The judge's reasoning never
 * leaves the adapter (J2); reports hold counts, rates and per-item pass/fail.
 *
 * Issue 30 (ADR 0009): sets, their items and reports belong to the caller's project, a set's suite is looked
 * up in it, and a judge's standing is read within it - one team's labels never certify another team's judge.
 * Another project's set or report answers SET_NOT_FOUND / REPORT_NOT_FOUND, as a missing one does.
 */
@Injectable()
export class CalibrationService {
  private readonly repo = new CalibrationRepository();
  private readonly status = new JudgeStatusRepository();
  constructor(
    @Inject(REGRESSION_JUDGE) private readonly judge: LangChainJudge | null,
    /** Suite versions folded from their streams in the log, cached (issue 27: never the ingestion's suite tables). */
    private readonly suites: SuiteVersions = new SuiteVersions(),
  ) {}

  // --- sets --------------------------------------------------------------------------------------------------

  async createSet(sql: Sql, project: string, body: unknown): Promise<{ set: CalibrationSetRecord; items: { count: number; golden_outputs: number; golden_truncated: number; human_pass: number } }> {
    if (!isRecord(body)) fail('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    const name = body.name;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 200) fail('INVALID_REQUEST', 'name must be a non-empty string of at most 200 characters', 'name');
    if (body.golden !== undefined && typeof body.golden !== 'boolean') fail('INVALID_REQUEST', 'golden must be a boolean', 'golden');
    const golden = body.golden === true;
    const rubric = body.rubric;
    if (rubric !== undefined && (typeof rubric !== 'string' || rubric.trim() === '' || rubric.length > MAX_RUBRIC_CHARS)) {
      fail('INVALID_REQUEST', `rubric must be a non-empty string of at most ${MAX_RUBRIC_CHARS} characters`, 'rubric');
    }
    if (body.suite_key !== undefined && !isSuiteKey(body.suite_key)) fail('INVALID_REQUEST', 'suite_key must be a suite key', 'suite_key');
    if (body.suite_version !== undefined && (!Number.isSafeInteger(body.suite_version) || (body.suite_version as number) < 1)) {
      fail('INVALID_REQUEST', 'suite_version must be a positive integer', 'suite_version');
    }
    if (body.suite_version !== undefined && body.suite_key === undefined) fail('INVALID_REQUEST', 'suite_version needs suite_key', 'suite_key');
    if (rubric === undefined && body.suite_key === undefined) {
      fail('RUBRIC_REQUIRED', 'a set needs the rubric its items were labelled against: `rubric`, or `suite_key` whose llm_judge cases carry theirs', 'rubric');
    }
    const items = body.items;
    if (!Array.isArray(items) || items.length === 0 || items.length > MAX_CALIBRATION_ITEMS) {
      fail('INVALID_REQUEST', `items must be an array of 1 to ${MAX_CALIBRATION_ITEMS} items`, 'items');
    }

    let suite: CompiledSuite | null = null;
    let suiteVersion: number | null = null;
    if (typeof body.suite_key === 'string') {
      const stored = await this.suites.find(sql, project, body.suite_key, body.suite_version as number | undefined);
      if (!stored) fail('SUITE_NOT_FOUND', `no suite ${body.suite_key}${body.suite_version ? ` v${body.suite_version}` : ''}`, 'suite_key');
      suite = compileSuite(stored);
      suiteVersion = stored.version;
    }

    const seen = new Set<string>();
    const records: CalibrationItemRecord[] = [];
    let truncated = 0;
    items.forEach((raw: unknown, i: number) => {
      const at = `items[${i}]`;
      if (!isRecord(raw)) fail('INVALID_REQUEST', `${at} must be an object`, at);
      if (!isSafeId(raw.item_id)) fail('INVALID_REQUEST', `${at}.item_id must be an id`, `${at}.item_id`);
      if (seen.has(raw.item_id)) fail('DUPLICATE_ITEM', `item ${raw.item_id} appears twice`, `${at}.item_id`);
      seen.add(raw.item_id);
      if (raw.case_id !== undefined && raw.case_id !== null && !isSafeId(raw.case_id)) fail('INVALID_REQUEST', `${at}.case_id must be an id`, `${at}.case_id`);
      if (typeof raw.output_hash !== 'string' || !HASH.test(raw.output_hash)) fail('INVALID_REQUEST', `${at}.output_hash must be a lowercase SHA-256 hex digest`, `${at}.output_hash`);
      if (raw.human_verdict !== 'pass' && raw.human_verdict !== 'fail') fail('INVALID_REQUEST', `${at}.human_verdict must be pass or fail`, `${at}.human_verdict`);
      if (!isCount(raw.output_chars, MAX_OUTPUT_CHARS * 2)) fail('INVALID_REQUEST', `${at}.output_chars must be a non-negative integer`, `${at}.output_chars`);
      const caseId = typeof raw.case_id === 'string' ? raw.case_id : null;
      if (suite && caseId !== null && !suite.cases.has(caseId)) fail('UNKNOWN_CASE', `${at}: ${caseId} is not a case of suite ${suite.suite_key} v${suite.version}`, `${at}.case_id`);
      if (rubric === undefined && !(suite && caseId !== null && suite.cases.get(caseId)!.scorer.kind === 'judge')) {
        fail('RUBRIC_REQUIRED', `${at}: no rubric - give the set a rubric, or a case_id of an llm_judge case of the suite`, `${at}.case_id`);
      }
      let goldenOutput: string | null = null;
      let goldenInput: string | null = null;
      for (const field of ['golden_output', 'golden_input'] as const) {
        const value = raw[field];
        if (value === undefined || value === null) continue;
        // D4: text is the one bounded exception, opt-in per set; anywhere else it is refused, never stored.
        if (!golden) fail('GOLDEN_NOT_AUTHORISED', `${at}.${field}: text is kept only in a set marked golden (D4); send the hash and length only`, `${at}.${field}`);
        if (typeof value !== 'string' || value.length > MAX_OUTPUT_CHARS) fail('INVALID_REQUEST', `${at}.${field} must be a string of at most ${MAX_OUTPUT_CHARS} characters`, `${at}.${field}`);
      }
      if (typeof raw.golden_output === 'string') {
        if (outputHash(raw.golden_output) !== raw.output_hash) fail('OUTPUT_HASH_MISMATCH', `${at}: golden_output does not hash to output_hash`, `${at}.golden_output`);
        if (raw.golden_output.length !== raw.output_chars) fail('OUTPUT_CHARS_MISMATCH', `${at}: output_chars is not the length of golden_output`, `${at}.output_chars`);
        goldenOutput = clampChars(raw.golden_output, MAX_GOLDEN_CHARS);
        if (goldenOutput !== raw.golden_output) truncated++;
      }
      if (typeof raw.golden_input === 'string') goldenInput = clampChars(raw.golden_input, MAX_GOLDEN_CHARS);
      records.push({
        item_id: raw.item_id,
        case_id: caseId,
        output_hash: raw.output_hash,
        human_verdict: raw.human_verdict,
        output_chars: raw.output_chars,
        golden_output: goldenOutput,
        golden_input: goldenInput,
      });
    });

    const set: CalibrationSetRecord = {
      id: randomUUID(),
      name: name.trim(),
      golden,
      rubric: (rubric as string | undefined) ?? null,
      suite_key: suite?.suite_key ?? null,
      suite_version: suiteVersion,
      item_count: records.length,
    };
    await this.repo.createSet(sql, project, set, records);
    const stored = (await this.repo.findSet(sql, project, set.id))!;
    return {
      set: stored,
      items: {
        count: records.length,
        golden_outputs: records.filter((r) => r.golden_output !== null).length,
        golden_truncated: truncated,
        human_pass: records.filter((r) => r.human_verdict === 'pass').length,
      },
    };
  }

  /** A set and its items: hashes, lengths and labels; never the golden text itself (it is not for reading back). */
  async getSet(sql: Sql, project: string, id: string) {
    if (!isUuid(id)) fail('SET_NOT_FOUND', `no calibration set ${id}`, 'id');
    const set = await this.repo.findSet(sql, project, id);
    if (!set) fail('SET_NOT_FOUND', `no calibration set ${id}`, 'id');
    const items = await this.repo.items(sql, project, id);
    const reports = await this.repo.reportsForSet(sql, project, id);
    return {
      set,
      items: items.map((i) => ({
        item_id: i.item_id,
        case_id: i.case_id,
        output_hash: i.output_hash,
        human_verdict: i.human_verdict,
        output_chars: i.output_chars,
        golden_output: i.golden_output === null ? 'absent' : i.golden_output.length === i.output_chars ? 'complete' : 'truncated',
      })),
      reports: reports.map((r) => ({ report_id: r.id, judge_model: r.judge_model, prompt_version: r.prompt_version, status: r.status, created_at: r.created_at })),
    };
  }

  // --- calibration runs ----------------------------------------------------------------------------------------

  /** J4: judges the set's items, computes the report, stores it (append-only) and answers it. */
  async calibrate(sql: Sql, project: string, body: unknown): Promise<CalibrationAnswer> {
    if (!isRecord(body)) fail('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    // Targets first: a lowered target is refused before anything is read or any judge call is paid for.
    const targets = this.targets(body.targets);
    const repeats = calibrationRepeats(body.repeats);
    if ('problem' in repeats) fail('INVALID_REQUEST', repeats.problem, 'repeats');
    const setId = body.set_id;
    if (typeof setId !== 'string' || !isUuid(setId)) fail('INVALID_REQUEST', 'set_id must be a calibration set id', 'set_id');
    const set = await this.repo.findSet(sql, project, setId);
    if (!set) fail('SET_NOT_FOUND', `no calibration set ${setId}`, 'set_id');
    const judge = this.requireJudge();
    const scope = calibrationScopeOf(set);
    const records = await this.repo.items(sql, project, setId);
    // J4: a set too small (or one-class) to certify anything is refused from its human labels alone - before
    // its outputs are checked or a single judge call is paid for.
    const check = checkCalibrationSet(
      records.map((r) => r.human_verdict === 'pass'),
      targets,
    );
    if (!check.sufficient) return this.refuseSet(sql, project, setId, scope, check, targets, judge);
    const judgeable = await this.judgeable(sql, project, set, records, body.outputs);

    const results = await Promise.all(judgeable.map((item) => judge.judge(item.request).catch((error: unknown) => asJudgeError(error))));
    const failures = new Map<JudgeErrorCode, number>();
    for (const r of results) {
      if (r instanceof JudgeError && r.code !== 'judge_unparseable') failures.set(r.code, (failures.get(r.code) ?? 0) + 1);
    }
    if (failures.size > 0) {
      // The judge could not be measured (credential, network, provider): nothing is stored, nothing certified.
      const counts = Object.fromEntries(failures);
      fail('JUDGE_CALL_FAILED', `the judge did not answer every item (${Object.entries(counts).map(([c, n]) => `${c}: ${n}`).join(', ')}); no report was stored`, undefined, { judge_errors: counts });
    }
    let input = 0;
    let output = 0;
    let cost = 0;
    let unparseable = 0;
    const perItem = judgeable.map((item, i) => {
      const r = results[i];
      let judgePass: boolean;
      let label: string;
      if (r instanceof JudgeError) {
        // J3: an unparseable verdict is a failed case in a run, so it is a judge "fail" here too.
        unparseable++;
        judgePass = false;
        label = r.code;
        input += r.details.usage?.input_tokens ?? 0;
        output += r.details.usage?.output_tokens ?? 0;
        cost += r.details.cost_usd ?? 0;
      } else {
        judgePass = judgePassed(r, item.minScore);
        label = judgePass ? 'judge_pass' : r.verdict === 'pass' ? 'judge_below_min_score' : 'judge_fail';
        input += r.usage.input_tokens;
        output += r.usage.output_tokens;
        cost += r.cost_usd;
      }
      return { item_id: item.record.item_id, human: item.record.human_verdict, judge: judgePass ? ('pass' as const) : ('fail' as const), label, output_chars: item.record.output_chars };
    });
    const metrics = calibrate(
      perItem.map((p) => ({ human_pass: p.human === 'pass', judge_pass: p.judge === 'pass', output_chars: p.output_chars })),
      targets,
    );
    const self = await measureSelfAgreement(judge, judgeable, perItem.map((p) => p.judge), repeats.repeats);
    const report: StoredCalibrationReport = {
      ...metrics,
      ...(self ? { self_agreement: self } : {}),
      set_id: setId,
      scope,
      judge: { model: judge.model, prompt_version: judge.promptVersion, calls: judgeable.length, unparseable, input_tokens: input, output_tokens: output, cost_usd: cost },
      items: perItem.map(({ item_id, human, judge: j, label }) => ({ item_id, human, judge: j, label })),
    };
    const stored = await this.repo.addReport(sql, project, {
      id: randomUUID(),
      set_id: setId,
      judge_model: judge.model,
      prompt_version: judge.promptVersion,
      scope,
      targets: metrics.targets,
      report,
      status: metrics.status,
    });
    return { report_id: stored.id, set_id: setId, status: metrics.status, judge_model: judge.model, prompt_version: judge.promptVersion, scope, created_at: stored.created_at, report };
  }

  /** J4: the refusal of a set below the size targets, stored (append-only) with its counts; no judge call. */
  private async refuseSet(sql: Sql, project: string, setId: string, scope: CalibrationScope, check: CalibrationSetCheck, targets: CalibrationTargets, judge: LangChainJudge): Promise<CalibrationAnswer> {
    const report: InsufficientSetReport = {
      status: 'insufficient_set',
      n: check.n,
      set: check,
      targets,
      reasons: check.reasons,
      set_id: setId,
      scope,
      judge: { model: judge.model, prompt_version: judge.promptVersion, calls: 0, unparseable: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      items: [],
    };
    const stored = await this.repo.addReport(sql, project, { id: randomUUID(), set_id: setId, judge_model: judge.model, prompt_version: judge.promptVersion, scope, targets, report, status: 'insufficient_set' });
    return { report_id: stored.id, set_id: setId, status: 'insufficient_set', judge_model: judge.model, prompt_version: judge.promptVersion, scope, created_at: stored.created_at, report };
  }

  async report(sql: Sql, project: string, id: string) {
    if (!isUuid(id)) fail('REPORT_NOT_FOUND', `no calibration report ${id}`, 'id');
    const r = await this.repo.findReport(sql, project, id);
    if (!r) fail('REPORT_NOT_FOUND', `no calibration report ${id}`, 'id');
    return { report_id: r.id, set_id: r.set_id, status: r.status, judge_model: r.judge_model, prompt_version: r.prompt_version, scope: r.scope, created_at: r.created_at, report: r.report };
  }

  // --- judge status (GT1) ----------------------------------------------------------------------------------

  /**
   * GT1/J4: a judge pin's certification scopes (default pin: this service's configured judge). With `scope`
   * (`rubric:<sha256>` or `suite:<key>`) that scope's standing, and with `passed` and `n` the corrected pass
   * rate of `passed` of `n` judged cases under it (Rogan-Gladen, Lang & Reiczigel 2014 interval; certified
   * scopes only). Without `scope`: every measured scope of the pin, each by its latest report. Issue 30: the
   * standing in `project`, from its own reports only.
   */
  async judgeStatus(sql: Sql, project: string, query: { model?: unknown; prompt_version?: unknown; scope?: unknown; passed?: unknown; n?: unknown }) {
    const model = typeof query.model === 'string' && query.model !== '' ? query.model : this.judge?.model;
    const promptVersion = typeof query.prompt_version === 'string' && query.prompt_version !== '' ? query.prompt_version : this.judge?.promptVersion;
    if (!model || !promptVersion) fail('INVALID_REQUEST', 'model and prompt_version are required (no judge is configured here to default to)', 'model');
    if (model.length > 200 || promptVersion.length > 100) fail('INVALID_REQUEST', 'model or prompt_version too long', 'model');
    const apparent = this.apparent(query.passed, query.n);
    if (query.scope !== undefined && query.scope !== '') {
      if (typeof query.scope !== 'string' || !SCOPE.test(query.scope)) fail('INVALID_REQUEST', 'scope must be rubric:<sha256 hex> or suite:<suite key>', 'scope');
      const status = await this.status.status(sql, project, model, promptVersion, query.scope);
      return { ...status, minimum_targets: MIN_CALIBRATION_TARGETS, ...(apparent ? { corrected_pass_rate: judgeCorrectedPassRate(status, apparent) } : {}) };
    }
    if (apparent) fail('INVALID_REQUEST', 'a corrected pass rate needs the scope whose calibration corrects it', 'scope');
    const scopes = await this.status.scopes(sql, project, model, promptVersion);
    const certified = scopes.filter((s) => s.status === 'certified').map((s) => s.scope);
    // The pin's summary: certified for some scope (the gate still checks the scope its cases use), or not.
    const status = certified.length > 0 ? 'certified' : scopes.length > 0 ? 'not_certified' : 'uncalibrated';
    return { judge_model: model, prompt_version: promptVersion, status, certified_scopes: certified, scopes, minimum_targets: MIN_CALIBRATION_TARGETS };
  }

  private apparent(passed: unknown, n: unknown): { passed: number; n: number } | null {
    if (passed === undefined && n === undefined) return null;
    const x = Number(passed);
    const total = Number(n);
    if (!Number.isSafeInteger(total) || total < 1) fail('INVALID_REQUEST', 'n must be a positive integer (the judged cases)', 'n');
    if (!Number.isSafeInteger(x) || x < 0 || x > total) fail('INVALID_REQUEST', 'passed must be an integer from 0 to n (the cases the judge passed)', 'passed');
    return { passed: x, n: total };
  }

  // --- helpers ---------------------------------------------------------------------------------------------

  private targets(raw: unknown): CalibrationTargets {
    if (raw !== undefined && raw !== null && !isRecord(raw)) fail('INVALID_REQUEST', `targets must be an object {${TARGET_KEYS.join('?, ')}?}`, 'targets');
    const t = (raw ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(t)) if (!(TARGET_KEYS as readonly string[]).includes(k)) fail('INVALID_REQUEST', `targets.${k} is not a target (${TARGET_KEYS.join(', ')})`, `targets.${k}`);
    try {
      return resolveCalibrationTargets(Object.fromEntries(TARGET_KEYS.filter((k) => t[k] !== undefined).map((k) => [k, t[k]])) as Partial<CalibrationTargets>);
    } catch (error) {
      if (error instanceof CalibrationTargetError) {
        fail(error.code, error.message.replace(/^[A-Z_]+: /, ''), 'targets');
      }
      throw error;
    }
  }

  private requireJudge(): LangChainJudge {
    if (!this.judge) fail('JUDGE_NOT_CONFIGURED', 'no judge is configured (JUDGE_PROVIDER); nothing can be calibrated');
    if (this.judge.credentialMissing) fail('JUDGE_CREDENTIAL_MISSING', 'the judge has no credential (JUDGE_API_KEY); nothing was judged or stored');
    return this.judge;
  }

  /** Pairs each item with its text (supplied, or a complete golden text) and what the judge is shown. */
  private async judgeable(sql: Sql, project: string, set: CalibrationSetRecord, records: readonly CalibrationItemRecord[], rawOutputs: unknown): Promise<JudgeableItem[]> {
    const supplied = new Map<string, { output: string; input?: string }>();
    if (rawOutputs !== undefined && rawOutputs !== null) {
      if (!Array.isArray(rawOutputs) || rawOutputs.length > MAX_CALIBRATION_ITEMS) fail('INVALID_REQUEST', `outputs must be an array of at most ${MAX_CALIBRATION_ITEMS} {item_id, output, input?}`, 'outputs');
      const known = new Set(records.map((r) => r.item_id));
      rawOutputs.forEach((o: unknown, i: number) => {
        const at = `outputs[${i}]`;
        if (!isRecord(o) || !isSafeId(o.item_id)) fail('INVALID_REQUEST', `${at}.item_id must be an id`, `${at}.item_id`);
        if (typeof o.output !== 'string' || o.output.length > MAX_OUTPUT_CHARS) fail('INVALID_REQUEST', `${at}.output must be a string of at most ${MAX_OUTPUT_CHARS} characters`, `${at}.output`);
        if (o.input !== undefined && o.input !== null && (typeof o.input !== 'string' || o.input.length > MAX_OUTPUT_CHARS)) fail('INVALID_REQUEST', `${at}.input must be a string`, `${at}.input`);
        if (!known.has(o.item_id)) fail('UNKNOWN_ITEM', `${at}: ${o.item_id} is not an item of set ${set.id}`, `${at}.item_id`);
        if (supplied.has(o.item_id)) fail('DUPLICATE_ITEM', `${at}: ${o.item_id} appears twice`, `${at}.item_id`);
        supplied.set(o.item_id, { output: o.output, ...(typeof o.input === 'string' ? { input: o.input } : {}) });
      });
    }
    let suite: CompiledSuite | null = null;
    if (set.suite_key) {
      // The set's project is the caller's (it was found in it): its suite is that project's suite of the key.
      const stored = await this.suites.find(sql, project, set.suite_key, set.suite_version ?? undefined);
      if (!stored) fail('SUITE_NOT_FOUND', `the set's suite ${set.suite_key} v${set.suite_version} is no longer stored`);
      suite = compileSuite(stored);
    }
    const missing: string[] = [];
    const out: JudgeableItem[] = [];
    for (const record of records) {
      const given = supplied.get(record.item_id);
      let text: string | null = null;
      if (given) {
        // The judge must grade the very output the human labelled.
        if (outputHash(given.output) !== record.output_hash) fail('OUTPUT_HASH_MISMATCH', `item ${record.item_id}: the output does not hash to the labelled output_hash`, 'outputs');
        text = given.output;
      } else if (record.golden_output !== null && record.golden_output.length === record.output_chars) {
        text = record.golden_output; // D4: a complete golden text (a truncated one must be supplied)
      }
      if (text === null) {
        missing.push(record.item_id);
        continue;
      }
      const compiled = suite && record.case_id ? suite.cases.get(record.case_id) : undefined;
      const fromCase = compiled ? judgeRequestFor(compiled, text) : null;
      const input = given?.input ?? record.golden_input ?? undefined;
      const request: JudgeRequest = fromCase
        ? { ...fromCase, ...(input !== undefined ? { input } : {}) }
        : { output: text, rubric: set.rubric as string, ...(input !== undefined ? { input } : {}) };
      const minScore = compiled && compiled.scorer.kind === 'judge' ? compiled.scorer.config.minScore : DEFAULT_MIN_SCORE;
      out.push({ record, request, minScore });
    }
    if (missing.length > 0) {
      fail(
        'OUTPUTS_MISSING',
        `${missing.length} item(s) have no output to judge: the set ${set.golden ? 'holds no complete golden text for them' : 'is not golden (D4)'}, so send them as outputs [{item_id, output}]: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', ...' : ''}`,
        'outputs',
        { missing: missing.length },
      );
    }
    return out;
  }
}

const TARGET_KEYS = ['agreement', 'kappa', 'min_items', 'min_per_class', 'agreement_basis'] as const;
const SCOPE = /^(rubric:[0-9a-f]{64}|suite:.{1,200})$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Only a code leaves: a foreign error's message may quote the request (D1). */
export function asJudgeError(error: unknown): JudgeError {
  return error instanceof JudgeError ? error : new JudgeError('judge_unavailable', 'the judge call failed unexpectedly', { reason: 'unexpected_error' });
}
