export { chooseBaseline, eligibilityOf, whatChanged } from './baseline';
export type { BaselineChoice, BaselineDecision, BaselineQuery, ChangeReport, CompletedRunRef, RunFingerprint } from './baseline';
export { compareRuns, regressionPValue } from './compare';
export type { Comparison, PairedCells, RegressionTestFacts, RegressionVerdict, RunAggregate } from './compare';
export { isScoredOutcome, pairCases, runOutcomes } from './case-pairs';
export type { ComparedCases, RunOutcomes } from './case-pairs';
export { mergeHistory, newestFirst } from './history';
export type { HistoryEntry } from './history';
