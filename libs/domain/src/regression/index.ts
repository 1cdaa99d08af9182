export { compareRuns } from './compare';
export type { Comparison, RegressionVerdict, RunAggregate } from './compare';
