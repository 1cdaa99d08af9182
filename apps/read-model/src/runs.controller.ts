import { Controller, Get, Inject, NotFoundException, Param, Query, Res } from '@nestjs/common';
import { RequireTier } from '@evals/platform';
import type { Response } from 'express';
import { formatSseFrame, RunQueries, type RunView } from '@evals/persistence';

export const RUN_QUERIES = Symbol('RUN_QUERIES');

function notFound(id: string): NotFoundException {
  // The id is echoed only when it is a well-formed id (RunQueries refuses the others before any lookup).
  const shown = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/.test(id) ? ` ${id}` : '';
  return new NotFoundException({ code: 'RUN_NOT_FOUND', message: `no run${shown} in the read model`, field: 'id' });
}

/** The run read model over HTTP (docs/read-model.md): the aggregate with its EvalResult, and the SSE replay (R6). */
@Controller('v1/runs')
export class RunsController {
  constructor(@Inject(RUN_QUERIES) private readonly queries: RunQueries) {}

  /** 200 `{run, eval_result, cases?}`; `?include=cases` adds the per-case evidence, ordered by case id. */
  @RequireTier('viewer')
  @Get(':id')
  async get(@Param('id') id: string, @Query('include') include?: string | string[]): Promise<RunView> {
    const includes = (Array.isArray(include) ? include : [include ?? '']).flatMap((v) => String(v).split(','));
    const view = await this.queries.run(id, { includeCases: includes.includes('cases') });
    if (view === null) throw notFound(id);
    return view;
  }

  /**
   * Server-Sent Events replay of the persisted run (R6): one `case` frame per evidence row, one `summary`
   * frame, then the response ends. Read-only: replaying twice gives the same bytes.
   */
  @RequireTier('viewer')
  @Get(':id/events')
  async events(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const frames = await this.queries.replay(id);
    if (frames === null) throw notFound(id);
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no');
    res.end(frames.map(formatSseFrame).join(''));
  }
}
