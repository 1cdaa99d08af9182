import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import { ApiError, ApiRoute, ProjectScope, RunViewDto } from '@evals/platform';
import type { Response as ExpressResponse } from 'express';
import { formatSseFrame, RunQueries } from '@evals/persistence';
import { RUN_EVENTS_SCHEMA } from './read-model.dto';

export const RUN_QUERIES = Symbol('RUN_QUERIES');

function notFound(id: string): ApiError {
  // The id is echoed only when it is a well-formed id (RunQueries refuses the others before any lookup).
  const shown = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/.test(id) ? ` ${id}` : '';
  return new ApiError('RUN_NOT_FOUND', `no run${shown} in the read model`, 'id');
}

const RUN_ID = { name: 'id', description: 'The run id.' };

/**
 * The run read model over HTTP (docs/read-model.md): the aggregate with its EvalResult, and the SSE replay (R6).
 * Both look the run up within the request's project (issue 30): another project's run answers the same
 * 404 as a missing one, naming only the id the caller sent.
 */
@Controller('v1/runs')
export class RunsController {
  constructor(@Inject(RUN_QUERIES) private readonly queries: RunQueries) {}

  /** 200 `{run, eval_result, cases?}`; `?include=cases` adds the per-case evidence, ordered by case id. */
  @ApiRoute({ tier: 'viewer', summary: 'A run with its EvalResult and regression decision (docs/read-model.md)', ok: { status: 200, type: RunViewDto, description: 'The run as projected.' }, errors: ['RUN_NOT_FOUND'] })
  @ApiParam(RUN_ID)
  @ApiQuery({ name: 'include', required: false, description: '`cases` adds the per-case results, ordered by case id.', schema: { type: 'string', enum: ['cases'] } })
  @Get(':id')
  async get(@ProjectScope() project: string, @Param('id') id: string, @Query('include') include?: string | string[]): Promise<RunViewDto> {
    const includes = (Array.isArray(include) ? include : [include ?? '']).flatMap((v) => String(v).split(','));
    const view = await this.queries.run(project, id, { includeCases: includes.includes('cases') });
    if (view === null) throw notFound(id);
    return view as RunViewDto;
  }

  /**
   * Server-Sent Events replay of the persisted run (R6): one `case` frame per evidence row, one `summary`
   * frame, then the response ends. Read-only: replaying twice gives the same bytes. The run is found (in the
   * request's project) before the status line is written, so a run of another project is a plain JSON 404.
   */
  @ApiRoute({
    tier: 'viewer',
    summary: 'Server-Sent Events replay of a persisted run (R6): a frame per case, then a summary',
    ok: { status: 200, description: 'The frames, then the response ends.', schema: RUN_EVENTS_SCHEMA, contentTypes: ['text/event-stream'] },
    errors: ['RUN_NOT_FOUND'],
  })
  @ApiParam(RUN_ID)
  @Get(':id/events')
  async events(@ProjectScope() project: string, @Param('id') id: string, @Res() res: ExpressResponse): Promise<void> {
    const frames = await this.queries.replay(project, id);
    if (frames === null) throw notFound(id);
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no');
    res.end(frames.map(formatSseFrame).join(''));
  }
}
