import { Controller, Get, Header } from '@nestjs/common';
import { ApiRoute } from './api-route';
import { Public } from './auth/decorators';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics (X2), one registry per process. Labels are low-cardinality codes and names only:
 * never an id, never an output.
 */
export const registry = new Registry();
// prom-client's default names already start with process_ or nodejs_: the prefix adds only the service's name.
collectDefaultMetrics({ register: registry, prefix: 'evals_' });

export const metrics = {
  casesScored: new Counter({ name: 'evals_cases_scored_total', help: 'Cases scored into evidence', labelNames: ['scorer'], registers: [registry] }),
  runsCompleted: new Counter({ name: 'evals_runs_completed_total', help: 'Runs whose scoring completed', registers: [registry] }),
  deadLettered: new Counter({ name: 'evals_dead_lettered_total', help: 'Messages dead-lettered, by subject and code', labelNames: ['subject', 'code'], registers: [registry] }),
  messagesHandled: new Counter({ name: 'evals_messages_handled_total', help: 'Bus messages handled, by consumer', labelNames: ['consumer'], registers: [registry] }),
  outboxPublished: new Counter({ name: 'evals_outbox_published_total', help: 'Outbox rows relayed to JetStream', registers: [registry] }),
  consumerLag: new Gauge({ name: 'evals_consumer_lag_messages', help: 'Messages pending for a durable consumer', labelNames: ['consumer'], registers: [registry] }),
  // Issue 13: HTTP calls to the provider only (each retry is a call), by outcome (`ok`, `unparseable`,
  // `rate_limited`, `server_error`, `timeout`, ...). Cache hits, skips and budget refusals have their own.
  judgeCalls: new Counter({ name: 'evals_judge_calls_total', help: 'HTTP calls to the judge provider, by outcome', labelNames: ['outcome'], registers: [registry] }),
  judgeCases: new Counter({ name: 'evals_judge_cases_total', help: 'llm_judge cases scored, by resulting label', labelNames: ['label'], registers: [registry] }),
  judgeSkipped: new Counter({ name: 'evals_judge_skipped_total', help: 'llm_judge cases failed without a judge call, by reason', labelNames: ['reason'], registers: [registry] }),
  judgeBudgetRefusals: new Counter({ name: 'evals_judge_budget_refusals_total', help: 'Gate judge spends refused or throttled by a budget, by decision', labelNames: ['decision'], registers: [registry] }),
  cacheLookups: new Counter({ name: 'evals_verdict_cache_lookups_total', help: 'Verdict cache lookups', labelNames: ['result'], registers: [registry] }),
  accessDenied: new Counter({ name: 'evals_http_access_denied_total', help: 'HTTP requests refused by access control, by code', labelNames: ['code'], registers: [registry] }),
};

@Controller()
@Public()
export class MetricsController {
  @ApiRoute({ tier: 'public', summary: 'Prometheus metrics (X2)', ok: { status: 200, description: 'The Prometheus text format.', schema: { type: 'string' }, contentTypes: ['text/plain'] } })
  @Get('metrics')
  @Header('content-type', registry.contentType)
  async metrics(): Promise<string> {
    return registry.metrics();
  }
}
