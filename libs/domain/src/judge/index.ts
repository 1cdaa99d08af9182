/** The judge, pure part (J1-J6, S3): the port, the versioned prompts, reply parsing, pairwise and calibration logic. */
export {
  JUDGE_ERROR_CODES,
  JUDGE_LABELS,
  JudgeError,
  estimateTokens,
  isJudgeError,
  judgeCost,
  judgeOutcome,
  judgePassed,
} from './judge.port';
export type {
  JudgeCallOptions,
  JudgeErrorCode,
  JudgeErrorDetails,
  JudgeOutcome,
  JudgePort,
  JudgePricing,
  JudgeRequest,
  JudgeUsage,
  JudgeVerdict,
  PassFail,
} from './judge.port';
export {
  JUDGE_PROMPT_V1,
  PAIRWISE_PROMPT_V1,
  JUDGE_PROMPT_TAGS,
  buildJudgeMessages,
  buildPairwiseMessages,
  judgeMessageChars,
  neutraliseTags,
  renderExpectedForJudge,
} from './judge-prompt';
export type { JudgeChatMessage, PairwiseOrder, PairwiseRequest, JudgePromptTemplate } from './judge-prompt';
export { MAX_REPLY_CHARS, REPLY_PARSE_FAILURES, parseJudgeReply, parsePairwiseReply } from './judge-parser';
export type { PairwiseChoice, ParsedPairwise, ParsedVerdict, ReplyParse, ReplyParseFailure } from './judge-parser';
export { decidePairwise, pairwiseReport } from './pairwise';
export type { PairwiseCaseResult, PairwiseDecision, PairwiseReport, PairwiseWinner, PositionConsistency } from './pairwise';
export {
  CalibrationInputError,
  CalibrationTargetError,
  MIN_CALIBRATION_TARGETS,
  calibrate,
  calibrationScopeOf,
  checkCalibrationSet,
  correctedJudgePassRate,
  correctedPassRatesByScope,
  resolveCalibrationTargets,
  rubricHash,
  rubricScope,
  suiteScope,
} from './calibration';
export type {
  AgreementBasis,
  CalibrationErrorCode,
  CalibrationScope,
  CalibrationSetCheck,
  CorrectedJudgePassRate,
  JudgedCase,
  ScopedCorrectedPassRate,
  CalibrationItem,
  CalibrationReason,
  CalibrationReport,
  CalibrationStatus,
  CalibrationTargets,
  KappaSummary,
  VerbosityBias,
} from './calibration';
export { DEFAULT_MIN_JUDGE_STABILITY, MAX_JUDGE_REPEATS_FOR_CALIBRATION, MAX_LISTED_UNSTABLE, majorityOutcome, selfAgreement, verdictStability } from './repeats';
export type { RepeatedOutcome, VerdictStability } from './repeats';
export { VERDICT_CACHE_KEY_SCHEME, parseCachedVerdict, verdictCacheKeyMaterial } from './verdict-cache';
export type { CachedVerdict, VerdictCache, VerdictCacheKeyParts } from './verdict-cache';
