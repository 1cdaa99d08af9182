import { Controller, Get, HttpException, Inject, Query, Res } from '@nestjs/common';
import { buildScorecard, DEFAULT_TREND_WINDOW, scorecardsToCsv, type Scorecard } from '@evals/domain';
import { RegressionRepository } from '@evals/persistence';
import { DATA_SOURCE, RequireTier } from '@evals/platform';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';

/**
 * `GET /v1/scorecards` (SC1): one scorecard per suite and subject, from the completed runs the regression
 * app has decided. `?format=csv` or `?format=json` (default); filters `suite_key`, `subject_kind`,
 * `subject_id`; `window` sets how many recent runs the trend spans. Columns: docs/scorecards.md.
 */
@Controller('v1/scorecards')
export class ScorecardsController {
  private readonly verdicts = new RegressionRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

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
    const subjects = await this.verdicts.subjects(this.db, { suite_key: suiteKey, subject_kind: subjectKind, subject_id: subjectId });
    const cards: Scorecard[] = [];
    for (const s of subjects) {
      const runs = await this.verdicts.history(this.db, s.suite_key, s.subject_kind, s.subject_id, 10_000);
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
