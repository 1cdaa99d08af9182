import { Controller, Get, Header } from '@nestjs/common';
import { Public } from './auth/decorators';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics (X2), one registry per process. Labels are low-cardinality codes and names only:
 * never an id, never an output.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'evals_process_' });

export const metrics = {
  casesScored: new Counter({ name: 'evals_cases_scored_total', help: 'Cases scored into evidence', labelNames: ['scorer'], registers: [registry] }),
  runsCompleted: new Counter({ name: 'evals_runs_completed_total', help: 'Runs whose scoring completed', registers: [registry] }),
  deadLettered: new Counter({ name: 'evals_dead_lettered_total', help: 'Messages dead-lettered, by subject and code', labelNames: ['subject', 'code'], registers: [registry] }),
  messagesHandled: new Counter({ name: 'evals_messages_handled_total', help: 'Bus messages handled, by consumer', labelNames: ['consumer'], registers: [registry] }),
  outboxPublished: new Counter({ name: 'evals_outbox_published_total', help: 'Outbox rows relayed to JetStream', registers: [registry] }),
  consumerLag: new Gauge({ name: 'evals_consumer_lag_messages', help: 'Messages pending for a durable consumer', labelNames: ['consumer'], registers: [registry] }),
  judgeCalls: new Counter({ name: 'evals_judge_calls_total', help: 'Calls to the judge model', labelNames: ['outcome'], registers: [registry] }),
  cacheLookups: new Counter({ name: 'evals_verdict_cache_lookups_total', help: 'Verdict cache lookups', labelNames: ['result'], registers: [registry] }),
  accessDenied: new Counter({ name: 'evals_http_access_denied_total', help: 'HTTP requests refused by access control, by code', labelNames: ['code'], registers: [registry] }),
};

@Controller()
@Public()
export class MetricsController {
  @Get('metrics')
  @Header('content-type', registry.contentType)
  async metrics(): Promise<string> {
    return registry.metrics();
  }
}
