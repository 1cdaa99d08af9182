export { chooseBaseline, eligibilityOf, whatChanged } from './baseline';
export type { BaselineChoice, BaselineDecision, BaselineQuery, ChangeReport, CompletedRunRef, RunFingerprint } from './baseline';
export { compareRuns } from './compare';
export type { Comparison, PairedCells, RegressionVerdict, RunAggregate } from './compare';
