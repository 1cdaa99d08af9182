import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isSafeId } from '@evals/contracts';
import {
  JudgeError,
  RunModel,
  compileSuite,
  pairwiseReport,
  type CompiledSuite,
  type PairwiseCaseResult,
  type PairwiseReport,
  type PairwiseRequest,
  type RunOpenedV1,
} from '@evals/domain';
import type { LangChainJudge, PairwiseComparison } from '@evals/judge';
import { ComparisonRepository, EventStore, loadRun, SuiteVersions, type Sql } from '@evals/persistence';
import { REGRESSION_JUDGE } from './calibration.judge';
import { asJudgeError, fail } from './calibration.service';

const MAX_CASES = 5_000;
const MAX_OUTPUT_CHARS = 512 * 1024;
const MAX_RUBRIC_CHARS = 20_000;

type CaseOutcome =
  | { readonly case_id: string; readonly winner: 'a' | 'b' | 'tie'; readonly position_consistent: boolean; readonly ab: string; readonly ba: string }
  | { readonly case_id: string; readonly error: string };

export interface ComparisonAnswer extends PairwiseReport {
  readonly comparison_id: string;
  readonly run_a: string;
  readonly run_b: string;
  readonly judge_model: string;
  readonly prompt_version: string;
  readonly created_at: string | undefined;
  /** Cases in both output lists (judged), and in only one of them (not judged). */
  readonly shared: number;
  readonly only_a: number;
  readonly only_b: number;
  readonly cases: readonly CaseOutcome[];
  readonly usage: { readonly calls: number; readonly input_tokens: number; readonly output_tokens: number; readonly cost_usd: number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Pairwise A/B (J5, opt-in): the outputs of two runs, supplied with the request because outputs are never
 * stored (D1), judged case by case twice with the order swapped (`LangChainJudge.compare`). A winner only
 * when both orders agree; the report gives wins, losses, ties and the measured position consistency with its
 * denominator and 95% interval (GT6), and is stored append-only. No output and no reasoning is kept.
 * Issue 30 (ADR 0009): both runs must be of the caller's project (another project's run is RUN_NOT_FOUND,
 * as a missing one is); the report belongs to that project and is read back only from it.
 */
@Injectable()
export class ComparisonService {
  private readonly repo = new ComparisonRepository();
  private readonly events = new EventStore();
  constructor(
    @Inject(REGRESSION_JUDGE) private readonly judge: LangChainJudge | null,
    /** Suite versions folded from their streams in the log, cached (issue 27: never the ingestion's suite tables). */
    private readonly suites: SuiteVersions = new SuiteVersions(),
  ) {}

  async compare(sql: Sql, project: string, body: unknown): Promise<ComparisonAnswer> {
    if (!isRecord(body)) fail('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    if (!isSafeId(body.run_a)) fail('INVALID_REQUEST', 'run_a must be a run id', 'run_a');
    if (!isSafeId(body.run_b)) fail('INVALID_REQUEST', 'run_b must be a run id', 'run_b');
    if (body.run_a === body.run_b) fail('SAME_RUN', 'run_a and run_b are the same run', 'run_b');
    const rubric = body.rubric;
    if (rubric !== undefined && rubric !== null && (typeof rubric !== 'string' || rubric.trim() === '' || rubric.length > MAX_RUBRIC_CHARS)) {
      fail('INVALID_REQUEST', `rubric must be a non-empty string of at most ${MAX_RUBRIC_CHARS} characters`, 'rubric');
    }
    const outputsA = this.outputs(body.outputs_a, 'outputs_a');
    const outputsB = this.outputs(body.outputs_b, 'outputs_b');

    const openedA = await this.opened(sql, project, body.run_a, 'run_a');
    const openedB = await this.opened(sql, project, body.run_b, 'run_b');
    if (openedA.suite_key !== openedB.suite_key) fail('RUNS_OTHER_SUITE', `run_a is a run of ${openedA.suite_key}, run_b of ${openedB.suite_key}`, 'run_b');
    const suite = await this.suite(sql, project, openedA);

    const shared = [...outputsA.keys()].filter((id) => outputsB.has(id));
    if (shared.length === 0) fail('NO_SHARED_CASES', 'no case id is in both outputs_a and outputs_b', 'outputs_b');
    const requests: Array<{ case_id: string; request: PairwiseRequest }> = [];
    const rubrics: string[] = [];
    for (const caseId of shared) {
      const compiled = suite.cases.get(caseId);
      if (!compiled) fail('UNKNOWN_CASE', `${caseId} is not a case of suite ${suite.suite_key} v${suite.version}`, 'outputs_a');
      const caseRubric = typeof rubric === 'string' ? rubric : compiled.scorer.kind === 'judge' ? compiled.scorer.config.rubric : null;
      if (caseRubric === null) fail('RUBRIC_REQUIRED', `case ${caseId} is not an llm_judge case: give a rubric to compare against`, 'rubric');
      rubrics.push(caseRubric);
      const material = compiled.judge ?? {};
      requests.push({
        case_id: caseId,
        request: {
          a: outputsA.get(caseId)!,
          b: outputsB.get(caseId)!,
          rubric: caseRubric,
          ...('expected' in material ? { expected: material.expected } : {}),
          ...(material.input !== undefined ? { input: material.input } : {}),
        },
      });
    }
    const judge = this.requireJudge();
    const results = await Promise.all(requests.map((r) => judge.compare(r.request).catch((error: unknown) => asJudgeError(error))));

    let input = 0;
    let output = 0;
    let cost = 0;
    const decided: PairwiseCaseResult[] = [];
    const cases: CaseOutcome[] = results.map((r: PairwiseComparison | JudgeError, i) => {
      const caseId = requests[i].case_id;
      if (r instanceof JudgeError) {
        decided.push({ error: r.code });
        input += r.details.usage?.input_tokens ?? 0;
        output += r.details.usage?.output_tokens ?? 0;
        cost += r.details.cost_usd ?? 0;
        return { case_id: caseId, error: r.code };
      }
      decided.push({ winner: r.winner, position_consistent: r.position_consistent });
      input += r.usage.input_tokens;
      output += r.usage.output_tokens;
      cost += r.cost_usd;
      return { case_id: caseId, winner: r.winner, position_consistent: r.position_consistent, ab: r.ab, ba: r.ba };
    });
    const report = pairwiseReport(decided);
    const content = {
      ...report,
      shared: shared.length,
      only_a: outputsA.size - shared.length,
      only_b: outputsB.size - shared.length,
      cases,
      usage: { calls: requests.length * 2, input_tokens: input, output_tokens: output, cost_usd: cost },
    };
    const stored = await this.repo.add(sql, project, {
      id: randomUUID(),
      run_a: body.run_a,
      run_b: body.run_b,
      judge_model: judge.model,
      prompt_version: judge.pairwisePromptVersion,
      rubric_hash: createHash('sha256').update(JSON.stringify([...new Set(rubrics)].sort()), 'utf8').digest('hex'),
      report: content,
    });
    return {
      comparison_id: stored.id,
      run_a: body.run_a,
      run_b: body.run_b,
      judge_model: judge.model,
      prompt_version: judge.pairwisePromptVersion,
      created_at: stored.created_at,
      ...content,
    };
  }

  async find(sql: Sql, project: string, id: string) {
    const row = /^[0-9a-f-]{36}$/i.test(id) ? await this.repo.find(sql, project, id) : null;
    if (!row) fail('COMPARISON_NOT_FOUND', `no comparison ${id}`, 'id');
    return { comparison_id: row.id, run_a: row.run_a, run_b: row.run_b, judge_model: row.judge_model, prompt_version: row.prompt_version, created_at: row.created_at, ...(row.report as object) };
  }

  private outputs(raw: unknown, field: string): Map<string, string> {
    if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_CASES) fail('INVALID_REQUEST', `${field} must be an array of 1 to ${MAX_CASES} {case_id, output}`, field);
    const out = new Map<string, string>();
    raw.forEach((o: unknown, i: number) => {
      const at = `${field}[${i}]`;
      if (!isRecord(o) || !isSafeId(o.case_id)) fail('INVALID_REQUEST', `${at}.case_id must be a case id`, `${at}.case_id`);
      if (typeof o.output !== 'string' || o.output.length > MAX_OUTPUT_CHARS) fail('INVALID_REQUEST', `${at}.output must be a string of at most ${MAX_OUTPUT_CHARS} characters`, `${at}.output`);
      if (out.has(o.case_id)) fail('DUPLICATE_CASE', `${at}: ${o.case_id} appears twice`, `${at}.case_id`);
      out.set(o.case_id, o.output);
    });
    return out;
  }

  /**
   * The run's `run.opened` facts, as the run's model folds its stream (R7) - of a run of `project` only: another
   * project's run gets the very refusal of a missing one (ADR 0009), naming only the id the caller sent.
   */
  private async opened(sql: Sql, project: string, runId: string, field: string): Promise<RunOpenedV1> {
    const { state } = await loadRun(sql, this.events, runId);
    if (!state.opened || RunModel.runProject(state) !== project) fail('RUN_NOT_FOUND', `no run ${runId}`, field);
    return state.opened;
  }

  private async suite(sql: Sql, project: string, opened: RunOpenedV1): Promise<CompiledSuite> {
    const stored = await this.suites.find(sql, project, opened.suite_key, opened.suite_version);
    if (!stored) fail('SUITE_NOT_FOUND', `suite ${opened.suite_key} v${opened.suite_version} is not stored`);
    return compileSuite(stored);
  }

  private requireJudge(): LangChainJudge {
    if (!this.judge) fail('JUDGE_NOT_CONFIGURED', 'no judge is configured (JUDGE_PROVIDER); nothing can be compared');
    if (this.judge.credentialMissing) fail('JUDGE_CREDENTIAL_MISSING', 'the judge has no credential (JUDGE_API_KEY); nothing was judged or stored');
    return this.judge;
  }
}
