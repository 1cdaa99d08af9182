import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiRoute, CLOCK, ID_GENERATOR, ProjectScope, RunViewDto, type Clock, type IdGenerator } from '@evals/platform';
import { RunRequestBody } from './ingestion.dto';
import { parseRunRequest } from './run-request';
import { RunIntakeService } from './run-intake.service';
import { RunWaiter } from './run-waiter';

/**
 * `POST /v1/runs` (R5): scores a complete run synchronously for its caller and answers with the completed
 * run and its comparison with the baseline. Idempotent on a caller-supplied `run_id`: the same request again
 * is the same run (and completes it, should an earlier attempt have stopped half-way - the intake derives
 * the ids of the run's work messages from the run id and the request's hash, not from this request's id,
 * which is only its correlation id); other content under that id is 409 RUN_ID_CONFLICT, an empty outputs
 * list 422 EMPTY_RUN, a bus that does not take the outputs 503 BUS_UNAVAILABLE with Retry-After.
 */
@Controller('v1/runs')
export class RunsController {
  constructor(
    private readonly intake: RunIntakeService,
    private readonly waiter: RunWaiter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  @ApiRoute({
    tier: 'operator',
    summary: 'Score a run: open it with its outputs, wait for its scoring and regression decision (R5)',
    body: RunRequestBody,
    ok: [
      { status: 200, type: RunViewDto, description: 'The completed run, its EvalResult (R3) and its regression decision.' },
      { status: 202, description: '`RUN_PENDING`: accepted, still being scored; read it at GET /v1/runs/{id}.', schema: { $ref: '#/components/schemas/ApiErrorBody' } },
    ],
    errors: ['INVALID_REQUEST', 'OUTPUT_TOO_LARGE', 'SUITE_NOT_FOUND', 'SUITE_VERSION_NOT_FOUND', 'UNKNOWN_CASE', 'DUPLICATE_OUTPUT', 'EMPTY_RUN', 'RUN_ID_CONFLICT', 'BASELINE_NOT_FOUND', 'BASELINE_OTHER_SUITE', 'BUS_UNAVAILABLE'],
  })
  @Post()
  @HttpCode(200)
  async create(@ProjectScope() project: string, @Body() body: RunRequestBody): Promise<RunViewDto> {
    const requestId = this.ids.uuid();
    // The contract's decoder validates (the same as on the bus), with the codes the intake answers.
    const d = parseRunRequest(body, requestId, this.clock.now().toISOString());
    // Issue 30: the run is the request's project's, and so is its suite (another project's key: SUITE_NOT_FOUND).
    await this.intake.open({ ...d, project, outputs: (d.outputs ?? []).map((o) => ({ case_id: o.case_id, output: o.output })) }, { message_id: requestId, correlation_id: requestId });
    return { ...(await this.waiter.completed(d.run_id)) } as RunViewDto;
  }
}
