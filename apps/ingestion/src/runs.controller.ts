import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { CLOCK, ID_GENERATOR, RequireTier, type Clock, type IdGenerator } from '@evals/platform';
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

  @RequireTier('operator')
  @Post()
  @HttpCode(200)
  async create(@Body() body: unknown): Promise<Record<string, unknown>> {
    const requestId = this.ids.uuid();
    const d = parseRunRequest(body, requestId, this.clock.now().toISOString());
    await this.intake.open({ ...d, outputs: (d.outputs ?? []).map((o) => ({ case_id: o.case_id, output: o.output })) }, { message_id: requestId, correlation_id: requestId });
    return { ...(await this.waiter.completed(d.run_id)) };
  }
}
