import fc from 'fast-check';
import { JUDGE_ERROR_CODES, JUDGE_NOT_CONFIGURED, MISSING_OUTPUT } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { EvidenceRepository } from './evidence.repository';
import { JudgeEvidenceRepository, type JudgedEvidenceRow } from './judge-evidence.repository';
import { pgliteDataSource, postgresDataSource, migratedDataSource, type TestDataSource } from './test-data-sources.testing';
import { RegressionRepository, type ComparedCases } from './regression.repository';
import type { Sql } from './sql';

/*
 * G7: the paired comparison of two runs' evidence, against an oracle written out in JavaScript, on random
 * evidence (seeded): cases in one run only, missing outputs, judge cases skipped (no judge model), failed
 * (an error label) or judged, and a third run that must not count. And (issue 15) the comparison is planned
 * without a nested loop even when the statistics do not know the run's rows yet - as right after a run.
 */

type Kind = 'absent' | 'missing' | 'plain' | 'judge_skipped' | 'judge_error' | 'judged';
const KINDS: Kind[] = ['absent', 'missing', 'plain', 'plain', 'plain', 'judge_skipped', 'judge_error', 'judged', 'judged'];

interface Row {
  readonly case_id: string;
  readonly kind: Exclude<Kind, 'absent'>;
  readonly passed: boolean;
  readonly score: number;
}

/** Evidence of one run: a case per position, or none ('absent'); scores on a grid of eighths (exact sums). */
const evidence = fc
  .array(fc.record({ kind: fc.constantFrom(...KINDS), eighths: fc.integer({ min: 0, max: 8 }) }), { maxLength: 300 })
  .map((cases) =>
    cases.flatMap(({ kind, eighths }, i): Row[] => {
      if (kind === 'absent') return [];
      const score = kind === 'missing' ? 0 : eighths / 8;
      return [{ case_id: `c${i}`, kind, passed: kind !== 'missing' && score >= 0.5, score }];
    }),
  );

function toJudged(runId: string, r: Row): JudgedEvidenceRow {
  const judge = r.kind === 'judged' || r.kind === 'judge_error' || r.kind === 'judge_skipped';
  const label = r.kind === 'missing' ? MISSING_OUTPUT : r.kind === 'judge_error' ? JUDGE_ERROR_CODES[0] : r.kind === 'judge_skipped' ? JUDGE_NOT_CONFIGURED : r.passed ? 'pass' : 'fail';
  return {
    run_id: runId,
    case_id: r.case_id,
    scorer: judge ? 'llm_judge' : 'exact',
    scorer_version: '1.0.0',
    score: r.score,
    passed: r.passed,
    label,
    detail_hash: null,
    output_chars: null,
    scored_at: '2026-12-02T04:00:00.000Z',
    judge: {
      judge_model: r.kind === 'judge_skipped' ? (null as unknown as string) : 'gpt-4o-2024-08-06',
      prompt_version: 'judge-v1',
      judge_cost_usd: 0,
      judge_input_tokens: 0,
      judge_output_tokens: 0,
      judge_cached: null,
    },
  };
}

/** The oracle: G7's definition, case by case. */
function oracle(run: Row[], baseline: Row[]): ComparedCases {
  const scored = (r: Row) => r.kind === 'plain' || r.kind === 'judged';
  const rs = new Map(run.filter(scored).map((r) => [r.case_id, r]));
  const bs = new Map(baseline.filter(scored).map((r) => [r.case_id, r]));
  const pairs = [...rs.values()].filter((r) => bs.has(r.case_id)).map((r) => [r, bs.get(r.case_id)!] as const);
  const sum = (xs: Row[]) => xs.reduce((s, x) => s + x.score, 0);
  return {
    compared: pairs.length,
    a: pairs.filter(([r, b]) => r.passed && b.passed).length,
    b: pairs.filter(([r, b]) => b.passed && !r.passed).length,
    c: pairs.filter(([r, b]) => r.passed && !b.passed).length,
    d: pairs.filter(([r, b]) => !r.passed && !b.passed).length,
    run_score_sum: sum(pairs.map(([r]) => r)),
    baseline_score_sum: sum(pairs.map(([, b]) => b)),
    run_cases: run.length,
    run_scored: rs.size,
    baseline_cases: baseline.length,
    baseline_scored: bs.size,
    run_scored_passed: [...rs.values()].filter((r) => r.passed).length,
    run_scored_score_sum: sum([...rs.values()]),
    baseline_scored_passed: [...bs.values()].filter((r) => r.passed).length,
    baseline_scored_score_sum: sum([...bs.values()]),
  };
}

/** Writes rows as the worker does: judge cases with their judge columns (a skipped one has no model), the others plain. */
async function write(ds: DataSource, runId: string, rows: Row[]): Promise<void> {
  const all = rows.map((r) => toJudged(runId, r));
  await ds.transaction(async (tx) => {
    await new JudgeEvidenceRepository().insertBatch(tx, all.filter((r) => r.scorer === 'llm_judge'));
    await new EvidenceRepository().insertBatch(tx, all.filter((r) => r.scorer !== 'llm_judge'));
  });
}

function comparedCasesContract(label: string, open: () => Promise<TestDataSource>): void {
  describe(`integration: the paired comparison of two runs (G7, ${label})`, () => {
    const db = migratedDataSource(open);
    const repo = new RegressionRepository();

    it('equals the case-by-case definition on random evidence, a third run beside them never counting', async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(evidence, evidence, evidence, async (runRows, baselineRows, otherRows) => {
          n += 1;
          const [run, baseline, other] = [`run-${n}`, `base-${n}`, `other-${n}`];
          await write(db(), run, runRows);
          await write(db(), baseline, baselineRows);
          await write(db(), other, otherRows);
          expect(await repo.comparedCases(db(), run, baseline)).toEqual(oracle(runRows, baselineRows));
        }),
        { numRuns: 12 },
      );
    }, 60_000);

    it('answers zeros for a run with no evidence', async () => {
      const got = await repo.comparedCases(db(), 'no-such-run', 'no-such-baseline');
      expect(got).toEqual(oracle([], []));
    });
  });
}

comparedCasesContract('PostgreSQL server', () => postgresDataSource('regrepo'));

comparedCasesContract('PGlite, the embedded default', () => pgliteDataSource());

function stalePlanContract(label: string, open: () => Promise<TestDataSource>): void {
  describe(`integration: the paired comparison under statistics that do not know the run yet (issue 15, ${label})`, () => {
    const db = migratedDataSource(open);

    it('is planned with no nested loop: right after a run, its rows are not in the statistics', async () => {
      const plain = (n: number): Row[] => Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, kind: 'plain' as const, passed: i % 3 > 0, score: i % 3 > 0 ? 1 : 0 }));
      for (const earlier of ['earlier-1', 'earlier-2', 'earlier-3']) await write(db(), earlier, plain(3_000));
      // The statistics as they are right after a run: they know earlier runs, neither this one nor the one
      // before it, its baseline (a server's autovacuum analyses later; PGlite, only when told).
      await db().query('ANALYZE evidence');
      await write(db(), 'baseline', plain(3_000));
      await write(db(), 'run', plain(3_000));
      const statements: Array<{ text: string; parameters?: unknown[] }> = [];
      const recording: Sql = { query: (text, parameters) => (statements.push({ text, parameters }), db().query(text, parameters)) };
      const got = await new RegressionRepository().comparedCases(recording, 'run', 'baseline');
      expect(got.compared).toBe(3_000);
      const [{ 'QUERY PLAN': plan }] = await db().query(`EXPLAIN (FORMAT JSON) ${statements[0]!.text}`, statements[0]!.parameters);
      const nodes: string[] = [];
      const walk = (node: { 'Node Type': string; Plans?: unknown[] }) => {
        nodes.push(node['Node Type']);
        for (const child of node.Plans ?? []) walk(child as { 'Node Type': string; Plans?: unknown[] });
      };
      walk((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan);
      expect(nodes).not.toContain('Nested Loop');
    }, 60_000);
  });
}

stalePlanContract('PostgreSQL server', () => postgresDataSource('regplan'));

stalePlanContract('PGlite, the embedded default', () => pgliteDataSource());
