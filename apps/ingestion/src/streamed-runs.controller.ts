import { createHmac } from 'node:crypto';
import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { decodeMessage, MAX_INLINE_OUTPUTS, SUBJECTS } from '@evals/contracts';
import type { WorkItem } from '@evals/domain';
import { ApiRoute, CLOCK, ID_GENERATOR, ProjectScope, RunViewDto, type Clock, type IdGenerator } from '@evals/platform';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { busUnavailable, IntakeError, unknownRun } from './intake-error';
import { isObject, parseRunRequest } from './run-request';
import { RunIntakeService } from './run-intake.service';
import { RunWaiter } from './run-waiter';
import { StreamedOutputsAcceptedDto, StreamedOutputsBody, StreamedRunDto, StreamedRunOpenBody, StreamedRunSealBody } from './streamed-runs.dto';

const RUN_ID = { name: 'run_id', description: 'The run, as POST /v1/streamed-runs opened it.' };

/**
 * A run of any size over HTTP (issue 15): opened without outputs, fed in batches of at most
 * MAX_INLINE_OUTPUTS, sealed - the HTTP form of `evals.run.requested` without outputs, `evals.output.submitted`
 * and `evals.run.sealed`, through the same intake (RunIntakeService) and so the same run model, work messages
 * and guarantees. A batch is on the bus (acknowledged by it) before its answer, so a seal sent after every
 * batch was answered never overtakes an output. `evals run` and `evals gate` use it above the inline cap.
 */
@Controller('v1/streamed-runs')
export class StreamedRunsController {
  constructor(
    private readonly intake: RunIntakeService,
    private readonly waiter: RunWaiter,
    @Inject(INGESTION_CONFIG) private readonly config: Pick<IngestionConfig, 'hmacSecret'>,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  @ApiRoute({
    tier: 'operator',
    summary: 'Open a run whose outputs follow in batches (R5, R7)',
    body: StreamedRunOpenBody,
    ok: { status: 200, type: StreamedRunDto, description: 'The open run (also for the same request again).' },
    errors: ['INVALID_REQUEST', 'SUITE_NOT_FOUND', 'SUITE_VERSION_NOT_FOUND', 'SUITE_INVALID', 'RUN_ID_CONFLICT', 'BASELINE_NOT_FOUND', 'BASELINE_OTHER_SUITE'],
  })
  @Post()
  @HttpCode(200)
  async open(@ProjectScope() project: string, @Body() body: StreamedRunOpenBody): Promise<StreamedRunDto> {
    if (!isObject(body)) throw new IntakeError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    if ('outputs' in body) throw new IntakeError('INVALID_REQUEST', 'a streamed run takes its outputs in batches: POST /v1/streamed-runs/{run_id}/outputs', 'outputs');
    if (typeof (body as { run_id?: unknown }).run_id !== 'string') throw new IntakeError('INVALID_REQUEST', 'run_id is required: the batches and the seal name it', 'run_id');
    const requestId = this.ids.uuid();
    const d = parseRunRequest(body, requestId, this.clock.now().toISOString());
    const { created, ticket } = await this.intake.open({ ...d, project, outputs: undefined }, { message_id: requestId, correlation_id: requestId });
    return {
      run_id: ticket.opened.run_id,
      suite_key: ticket.opened.suite_key,
      suite_version: ticket.opened.suite_version,
      case_count: ticket.opened.case_count,
      created,
      phase: this.intake.sealedIn(ticket) ? 'sealed' : 'open',
    };
  }

  @ApiRoute({
    tier: 'operator',
    summary: 'Submit a batch of outputs to an open run (evals.output.submitted over HTTP)',
    body: StreamedOutputsBody,
    ok: { status: 200, type: StreamedOutputsAcceptedDto, description: 'The batch is on the bus for the scoring workers.' },
    errors: ['INVALID_REQUEST', 'OUTPUT_TOO_LARGE', 'UNKNOWN_RUN', 'RUN_SEALED', 'UNKNOWN_CASE', 'DUPLICATE_OUTPUT', 'BUS_UNAVAILABLE'],
  })
  @ApiParam(RUN_ID)
  @Post(':run_id/outputs')
  @HttpCode(200)
  async submit(@ProjectScope() project: string, @Param('run_id') runId: string, @Body() body: StreamedOutputsBody): Promise<StreamedOutputsAcceptedDto> {
    const items = this.decodeBatch(runId, body);
    // Another project's run is not found here (issue 30): the ticket is null for it, as for no run.
    const ticket = await this.intake.ticket(runId, project);
    if (!ticket) throw unknownRun(runId);
    if (this.intake.sealedIn(ticket)) throw new IntakeError('RUN_SEALED', `run ${runId} is sealed`, 'run_id');
    const seen = new Set<string>();
    items.forEach((o, i) => {
      if (!ticket.caseIds.has(o.case_id)) throw new IntakeError('UNKNOWN_CASE', `case ${o.case_id} is not in the run's suite version`, `outputs[${i}].case_id`);
      if (seen.has(o.case_id)) throw new IntakeError('DUPLICATE_OUTPUT', `case ${o.case_id} has more than one output`, `outputs[${i}].case_id`);
      seen.add(o.case_id);
    });
    // The work message ids derive from the batch's content (keyed, D2): the same batch sent again is
    // de-duplicated by the bus, and a redelivery past its window is recognised by the worker.
    const mac = createHmac('sha256', this.config.hmacSecret);
    for (const o of items) mac.update(o.case_id).update('\0').update(o.output).update('\0');
    const messageId = `${runId}:batch:${mac.digest('hex').slice(0, 32)}`;
    await this.intake.forward(runId, items, { message_id: messageId, correlation_id: runId }, ticket).catch((error: unknown) => {
      throw error instanceof IntakeError ? error : busUnavailable(error);
    });
    return { run_id: runId, accepted: items.length };
  }

  @ApiRoute({
    tier: 'operator',
    summary: 'Seal a streamed run and wait for its scoring and regression decision (R5, R7)',
    ok: [
      { status: 200, type: RunViewDto, description: 'The completed run, its EvalResult (R3) and its regression decision.' },
      { status: 202, description: '`RUN_PENDING`: sealed, still being scored; read it at GET /v1/runs/{id}.', schema: { $ref: '#/components/schemas/ApiErrorBody' } },
    ],
    body: StreamedRunSealBody,
    errors: ['INVALID_REQUEST', 'UNKNOWN_RUN', 'EMPTY_RUN', 'BUS_UNAVAILABLE'],
  })
  @ApiParam(RUN_ID)
  @Post(':run_id/seal')
  @HttpCode(200)
  async seal(@ProjectScope() project: string, @Param('run_id') runId: string, @Body() body: StreamedRunSealBody | undefined): Promise<RunViewDto> {
    const wait = isObject(body) ? body['wait'] : undefined;
    if (wait !== undefined && typeof wait !== 'boolean') throw new IntakeError('INVALID_REQUEST', 'wait must be true or false', 'wait');
    // A fixed cause: the seal sent again publishes the same work message id, de-duplicated by the bus.
    await this.intake.seal(runId, project, { message_id: `${runId}:http-seal`, correlation_id: runId }).catch((error: unknown) => {
      throw error instanceof IntakeError ? error : busUnavailable(error);
    });
    if (wait === false) throw new IntakeError('RUN_PENDING', `run ${runId} is sealed and being scored: GET /v1/runs/${runId}`, 'run_id');
    return { ...(await this.waiter.completed(runId)) } as RunViewDto;
  }

  /** Each output checked by the `evals.output.submitted` v1 decoder, as it would be on the bus. */
  private decodeBatch(runId: string, body: unknown): WorkItem[] {
    const outputs = isObject(body) ? body['outputs'] : undefined;
    if (!Array.isArray(outputs) || outputs.length === 0) throw new IntakeError('INVALID_REQUEST', 'outputs must be a non-empty array', 'outputs');
    if (outputs.length > MAX_INLINE_OUTPUTS) throw new IntakeError('INVALID_REQUEST', `a batch takes at most ${MAX_INLINE_OUTPUTS} outputs`, 'outputs');
    const now = this.clock.now().toISOString();
    return outputs.map((o: unknown, i) => {
      const data = isObject(o) ? { run_id: runId, case_id: o['case_id'], output: o['output'] } : o;
      const envelope = { schema: `${SUBJECTS.OUTPUT_SUBMITTED}.v1`, type: SUBJECTS.OUTPUT_SUBMITTED, version: 1, data, metadata: { message_id: `${runId}:${i}`, occurred_at: now } };
      const decoded = decodeMessage(SUBJECTS.OUTPUT_SUBMITTED, JSON.stringify(envelope));
      if (!decoded.ok) {
        const issues = decoded.issues.map((x) => ({ field: `outputs[${i}]${x.field.replace(/^data/, '')}`, constraint: x.constraint }));
        const runIdIssue = decoded.issues.some((x) => x.field === 'data.run_id');
        throw new IntakeError(
          decoded.code === 'OUTPUT_TOO_LARGE' ? 'OUTPUT_TOO_LARGE' : 'INVALID_REQUEST',
          runIdIssue ? 'the run id in the path is not an id' : `invalid output: ${issues.map((x) => `${x.field} (${x.constraint})`).join(', ')}`,
          runIdIssue ? 'run_id' : issues[0]?.field,
          { issues },
        );
      }
      return { case_id: (o as { case_id: string }).case_id, output: (o as { output: string }).output };
    });
  }
}
