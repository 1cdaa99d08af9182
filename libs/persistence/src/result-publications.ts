import type { Sql } from './sql';

/**
 * Which runs' EvalResults were already announced (R4): a rebuild of the read model must not announce them
 * again (docs/read-model.md). The outbox is the record - it is never reset by a rebuild - and the
 * eval_results rows present before the reset are counted too, to stay on the safe side.
 */
export class ResultPublications {
  /**
   * Run ids with an outbox row on `subject` or on one of its project subjects (`<subject>.<project>`, issue 30:
   * a result of another project than `default` is announced there) - published or waiting - or a recorded
   * EvalResult.
   */
  async runIds(sql: Sql, subject: string): Promise<Set<string>> {
    const rows: Array<{ run_id: string | null }> = await sql.query(
      `SELECT payload->'data'->>'run_id' AS run_id FROM outbox WHERE subject = $1 OR starts_with(subject, $1 || '.')
       UNION
       SELECT run_id FROM eval_results`,
      [subject],
    );
    return new Set(rows.map((r) => r.run_id).filter((id): id is string => typeof id === 'string'));
  }
}
