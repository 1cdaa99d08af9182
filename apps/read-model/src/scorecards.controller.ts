import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { buildScorecard, DEFAULT_TREND_WINDOW, scorecardsToCsv, type Scorecard } from '@evals/domain';
import { RunQueries } from '@evals/persistence';
import { ApiRoute, ProjectScope, refuse } from '@evals/platform';
import { ScorecardsDto } from './read-model.dto';
import type { Response as ExpressResponse } from 'express';
import { RUN_QUERIES } from './runs.controller';

/** Runs per suite and subject a scorecard is computed from (the most recent ones). */
const MAX_RUNS_PER_CARD = 10_000;

/**
 * `GET /v1/scorecards` (SC1): one scorecard per suite and subject, from the completed runs the regression
 * app has decided - as the read model projected them from `run.compared` (read_run_verdicts), never the
 * regression app's own table. `?format=csv` or `?format=json` (default); filters `suite_key`,
 * `subject_kind`, `subject_id`; `window` sets how many recent runs the trend spans. Columns:
 * docs/scorecards.md. A scorecard is a suite and subject within the request's project (issue 30): the same
 * suite key and subject in two projects are two scorecards, each seen only from its own project.
 */
@Controller('v1/scorecards')
export class ScorecardsController {
  constructor(@Inject(RUN_QUERIES) private readonly queries: RunQueries) {}

  @ApiRoute({
    tier: 'viewer',
    summary: 'Scorecards per suite and subject (SC1), as JSON or CSV',
    ok: [
      { status: 200, type: ScorecardsDto, description: 'JSON (format=json, the default).' },
      { status: 200, description: 'CSV (format=csv): the columns of docs/scorecards.md.', schema: { type: 'string' }, contentTypes: ['text/csv'] },
    ],
    errors: ['INVALID_REQUEST'],
  })
  @ApiQuery({ name: 'suite_key', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'subject_kind', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'subject_id', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'window', required: false, description: 'Runs the trend spans.', schema: { type: 'integer', minimum: 2, maximum: 1000, default: DEFAULT_TREND_WINDOW } })
  @ApiQuery({ name: 'format', required: false, schema: { type: 'string', enum: ['json', 'csv'], default: 'json' } })
  @Get()
  async list(
    @ProjectScope() project: string,
    @Res({ passthrough: true }) res: ExpressResponse,
    @Query('suite_key') suiteKey?: string,
    @Query('subject_kind') subjectKind?: string,
    @Query('subject_id') subjectId?: string,
    @Query('window') windowParam?: string,
    @Query('format') format = 'json',
  ): Promise<string | { scorecards: Scorecard[] }> {
    if (format !== 'json' && format !== 'csv') refuse('INVALID_REQUEST', 'format must be json or csv', 'format');
    const window = windowParam === undefined ? DEFAULT_TREND_WINDOW : Number(windowParam);
    if (!Number.isInteger(window) || window < 2 || window > 1000) {
      refuse('INVALID_REQUEST', 'window must be an integer from 2 to 1000', 'window');
    }
    const decided = await this.queries.decidedRuns(project, { suite_key: suiteKey, subject_kind: subjectKind, subject_id: subjectId }, MAX_RUNS_PER_CARD);
    const cards: Scorecard[] = [];
    for (const runs of decided) {
      const card = buildScorecard(runs, window);
      // J4/J9: the latest run's judge-corrected pass rate, under the scopes certified now.
      if (card) cards.push(buildScorecard(runs, window, await this.queries.judgeCorrections(project, { run_id: card.latest_run_id, suite_key: card.suite_key, suite_version: card.latest_suite_version }))!);
    }
    if (format === 'csv') {
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.setHeader('content-disposition', 'attachment; filename="scorecards.csv"');
      return scorecardsToCsv(cards);
    }
    return { scorecards: cards };
  }
}
