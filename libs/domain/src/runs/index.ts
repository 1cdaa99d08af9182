export { detailHash, detailKeyId } from './detail-hash';
export { toEvalResult } from './eval-result';
export type { EvalResult } from './eval-result';
export { MAX_LABEL_CHARS, clampChars, redactLabel } from './redaction';
export { LOG_ONLY_RUN_EVENTS, MAX_LISTED_MISSING, RUN_EVENTS, parseRunEvent, runStreamId } from './run-events';
export { MAX_EVENT_REASON_ISSUES, decodeRunEvent, isUuid, joinIssues } from './run-event.codec';
export type { RunEventDecoding } from './run-event.codec';
export { MAX_CASES_PER_EVENT, caseOutcomeOf, caseOutcomesOf, casesScoredCounts, encodeCaseOutcomes } from './case-outcomes';
export type { CaseOutcome } from './case-outcomes';
export type { CaseResultV1, CasesScoredV1, CasesScoredV2, CasesScoredV3, RunComparedV1, RunEvent, RunEventType, RunJudgeStabilityV1, RunJudgeUsageV1, RunOpenedV1, RunScoredV1, RunSealedV1, RunSource } from './run-events';
export { evolveRun, summarizeRun } from './run.projection';
export { evolveVerdict, foldRunView, regressionView } from './run-view.projection';
export type { CompletedRunFacts, FoldedRunView, ProjectedVerdict, RegressionView, VerdictStep } from './run-view.projection';
export type { EventContext, RunDoc, RunStatus, RunSummary } from './run.projection';
export {
  JUDGE_NOT_CONFIGURED,
  MISSING_OUTPUT,
  SuiteCompileError,
  compileSuite,
  judgeRequestFor,
  judgeSkippedEvidence,
  judgedCaseEvidence,
  missingOutputEvidence,
  scoreCase,
} from './case-scoring';
export type { CaseEvidence, CompiledCase, CompiledSuite, JudgeCallRecord, JudgeEvidence, ScorableSuite, ScoringContext } from './case-scoring';
export { repeatedJudgeEvidence } from './judged-repeats';
export { suiteScorerVersions } from './suite-scorer-versions';
export type { ScorerSpecSuite } from './suite-scorer-versions';
export { WORK_SUBJECTS, decodeWork, encodeWork } from './work-messages';
export type { ScoreWorkV1, SealWorkV1, WorkItem, WorkMessage, WorkMetadata } from './work-messages';
/** The run's model (R7): `RunModel.decide`, `RunModel.evolve`, `RunModel.foldRun` and the facts it answers. */
export * as RunModel from './run.model';
export { RUN_RULE_CODES, RunRuleError, baselineEligibility } from './run.model';
export type { BaselineEligibility, IneligibleReason, RunCommand, RunCompleteness, RunPhase, RunRuleCode, RunState, RunVerdict, SealReason } from './run.model';
