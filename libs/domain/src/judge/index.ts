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
  correctedPassRate,
  resolveCalibrationTargets,
} from './calibration';
export type {
  CalibrationErrorCode,
  CalibrationItem,
  CalibrationReason,
  CalibrationReport,
  CalibrationStatus,
  CalibrationTargets,
  CorrectedPassRate,
  KappaSummary,
  VerbosityBias,
} from './calibration';
export { VERDICT_CACHE_KEY_SCHEME, parseCachedVerdict, verdictCacheKeyMaterial } from './verdict-cache';
export type { CachedVerdict, VerdictCache, VerdictCacheKeyParts } from './verdict-cache';
