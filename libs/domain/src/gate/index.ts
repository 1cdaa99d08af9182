export { JUDGE_CERTIFICATION_PATH, decideGate, effectiveVerdict, MAX_OVERRIDE_REASON_CHARS, MIN_OVERRIDE_REASON_CHARS, overrideReasonProblem, sampleCaseIds } from './gate';
export type { BudgetDecision, GateDecision, GateInputs, GateNote, GateReasonCode, GateSample, GateWarningCode, JudgeCalibrationStatus, OverrideEntry } from './gate';
export { decideGateFamily, FAMILY_ALPHA } from './family';
export type { FamilyDecision, FamilyNote, FamilySuiteDecision, FamilySuiteInput } from './family';
export {
  BUDGET_MODES,
  BUDGET_PERIODS,
  DEFAULT_ESTIMATED_OUTPUT_TOKENS,
  budgetScopes,
  budgetWindowStart,
  estimateJudgeCaseCost,
  isBudgetScope,
  planJudgeSpend,
  scopeCovers,
} from './budget';
export type { BudgetMode, BudgetPeriod, BudgetPlan, BudgetStanding, BudgetState, JudgeCaseCost } from './budget';
