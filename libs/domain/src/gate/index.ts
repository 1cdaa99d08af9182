export { decideGate, effectiveVerdict, MIN_OVERRIDE_REASON_CHARS, overrideReasonProblem, sampleCaseIds } from './gate';
export type { BudgetDecision, GateDecision, GateInputs, GateNote, GateReasonCode, GateSample, GateWarningCode, JudgeCalibrationStatus, OverrideEntry } from './gate';
export { decideGateFamily, FAMILY_ALPHA } from './family';
export type { FamilyDecision, FamilyNote, FamilySuiteDecision, FamilySuiteInput } from './family';
