import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { decodeMessage, SUBJECTS } from '@evals/contracts';
import { RunQueries } from '@evals/persistence';
import { CLOCK, DATA_SOURCE, ID_GENERATOR, type Clock, type IdGenerator } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { IntakeError } from './intake-error';
import { RunIntakeService } from './run-intake.service';

/**
 * `POST /v1/runs` (R5): scores a complete run synchronously for its caller and answers with the completed
 * run. Idempotent on a caller-supplied `run_id`. The body is validated by the same contract as
 * `evals.run.requested` v1 (class-validator DTOs in libs/contracts), so HTTP and bus cannot drift.
 */
@Controller('v1/runs')
export class RunsController {
  private readonly queries: RunQueries;

  constructor(
    private readonly intake: RunIntakeService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(INGESTION_CONFIG) private readonly config: IngestionConfig,
  ) {
    this.queries = new RunQueries(db);
  }

  @Post()
  @HttpCode(200)
  async create(@Body() body: unknown): Promise<Record<string, unknown>> {
    const requestId = this.ids.uuid();
    const raw = isObject(body) ? body : {};
    const data = { ...raw, run_id: raw['run_id'] ?? requestId, source: raw['source'] ?? 'inline', outputs: raw['outputs'] ?? [] };
    const envelope = {
      schema: `${SUBJECTS.RUN_REQUESTED}.v1`,
      type: SUBJECTS.RUN_REQUESTED,
      version: 1,
      data,
      metadata: { message_id: requestId, occurred_at: this.clock.now().toISOString() },
    };
    const decoded = decodeMessage(SUBJECTS.RUN_REQUESTED, JSON.stringify(envelope));
    if (!isObject(body)) throw new IntakeError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    if (!decoded.ok) {
      const issues = decoded.issues.map((i) => ({ field: i.field.replace(/^data\.?/, '') || 'body', constraint: i.constraint }));
      throw new IntakeError(
        decoded.code === 'OUTPUT_TOO_LARGE' ? 'OUTPUT_TOO_LARGE' : 'INVALID_REQUEST',
        `invalid request: ${issues.map((i) => `${i.field} (${i.constraint})`).join(', ')}`,
        issues[0]?.field,
        { issues },
      );
    }
    if (decoded.message.type !== SUBJECTS.RUN_REQUESTED) throw new IntakeError('INVALID_REQUEST', 'unexpected message type', 'body');
    const d = decoded.message.data;
    await this.intake.open({ ...d, outputs: (d.outputs ?? []).map((o) => ({ case_id: o.case_id, output: o.output })) }, { message_id: requestId, correlation_id: requestId });
    return this.waitForCompletion(d.run_id);
  }

  /**
   * Polls the read model until the run is completed and compared with its baseline (R5, G1); a run slower
   * than RUN_TIMEOUT_MS answers 202 with where to look.
   */
  private async waitForCompletion(runId: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + this.config.runTimeoutMs;
    let delay = 10;
    for (;;) {
      const view = await this.queries.run(runId);
      if (view && view.run.status === 'completed' && view.eval_result && view.regression) return { ...view };
      if (Date.now() > deadline) {
        throw new IntakeError('RUN_PENDING', `run ${runId} is still being scored: GET /v1/runs/${runId}`, 'run_id');
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 200);
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
