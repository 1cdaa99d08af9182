import { Controller, Get, HttpException, Inject, Query, Res } from '@nestjs/common';
import { buildScorecard, DEFAULT_TREND_WINDOW, scorecardsToCsv, type Scorecard } from '@evals/domain';
import { RunQueries } from '@evals/persistence';
import { RequireTier } from '@evals/platform';
import type { Response } from 'express';
import { RUN_QUERIES } from './runs.controller';

/** Runs per suite and subject a scorecard is computed from (the most recent ones). */
const MAX_RUNS_PER_CARD = 10_000;

/**
 * `GET /v1/scorecards` (SC1): one scorecard per suite and subject, from the completed runs the regression
 * app has decided - as the read model projected them from `run.compared` (read_run_verdicts), never the
 * regression app's own table. `?format=csv` or `?format=json` (default); filters `suite_key`,
 * `subject_kind`, `subject_id`; `window` sets how many recent runs the trend spans. Columns:
 * docs/scorecards.md.
 */
@Controller('v1/scorecards')
export class ScorecardsController {
  constructor(@Inject(RUN_QUERIES) private readonly queries: RunQueries) {}

  @RequireTier('viewer')
  @Get()
  async list(
    @Res({ passthrough: true }) res: Response,
    @Query('suite_key') suiteKey?: string,
    @Query('subject_kind') subjectKind?: string,
    @Query('subject_id') subjectId?: string,
    @Query('window') windowParam?: string,
    @Query('format') format = 'json',
  ): Promise<string | { scorecards: Scorecard[] }> {
    if (format !== 'json' && format !== 'csv') throw new HttpException({ code: 'INVALID_REQUEST', message: 'format must be json or csv', field: 'format' }, 400);
    const window = windowParam === undefined ? DEFAULT_TREND_WINDOW : Number(windowParam);
    if (!Number.isInteger(window) || window < 2 || window > 1000) {
      throw new HttpException({ code: 'INVALID_REQUEST', message: 'window must be an integer from 2 to 1000', field: 'window' }, 400);
    }
    const decided = await this.queries.decidedRuns({ suite_key: suiteKey, subject_kind: subjectKind, subject_id: subjectId }, MAX_RUNS_PER_CARD);
    const cards: Scorecard[] = [];
    for (const runs of decided) {
      const card = buildScorecard(runs, window);
      if (card) cards.push(card);
    }
    if (format === 'csv') {
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.setHeader('content-disposition', 'attachment; filename="scorecards.csv"');
      return scorecardsToCsv(cards);
    }
    return { scorecards: cards };
  }
}
