import { summarizeRun, type EvalResult, type RunDoc } from '@evals/domain';
import { RunReadModelRepository, type Sql } from '@evals/persistence';

const readModel = new RunReadModelRepository();

/** The run as the API shows it: the aggregate with every rate's denominator and interval (GT6). */
export async function loadRunView(sql: Sql, runId: string): Promise<{ doc: RunDoc; view: Record<string, unknown> } | null> {
  const doc = await readModel.load(sql, runId);
  if (!doc) return null;
  const result: EvalResult | null = await readModel.evalResult(sql, runId);
  return { doc, view: { run: { ...doc, summary: summarizeRun(doc) }, eval_result: result } };
}
