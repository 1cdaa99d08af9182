export { buildScorecard, DEFAULT_TREND_WINDOW, SCORECARD_CSV_COLUMNS, scorecardsToCsv } from './scorecard';
export type { RateWithInterval, Scorecard, ScorecardRun } from './scorecard';
