export { chooseBaseline, eligibilityOf, whatChanged } from './baseline';
export type { BaselineChoice, BaselineDecision, BaselineQuery, ChangeReport, CompletedRunRef, RunFingerprint } from './baseline';
export { compareRuns, regressionPValue } from './compare';
export type { Comparison, PairedCells, RegressionTestFacts, RegressionVerdict, RunAggregate } from './compare';
