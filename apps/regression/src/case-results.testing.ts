import { randomUUID } from 'node:crypto';
import { caseOutcomeOf, encodeCaseOutcomes, RUN_EVENTS, runStreamId, type CaseEvidence } from '@evals/domain';
import { EventStore, type Sql } from '@evals/persistence';

/**
 * A run's per-case results as the scoring worker leaves them for the regression app (issue 27): its
 * `cases.scored` v3 events in the log, one stream per batch. `rows` are evidence-shaped, as the worker's.
 */
export async function appendCaseResults(sql: Sql, runId: string, rows: readonly CaseEvidence[], at: string, batch = 'b1'): Promise<void> {
  const metadata = () => {
    const id = randomUUID();
    return { message_id: id, correlation_id: id, causation_id: id, occurred_at: at };
  };
  await new EventStore().append(
    sql,
    `${runStreamId(runId)}.cases.${batch}`,
    0,
    encodeCaseOutcomes(runId, rows.map(caseOutcomeOf)).map((data) => ({ type: RUN_EVENTS.casesScored, version: 3, data, metadata: metadata() })),
  );
}
