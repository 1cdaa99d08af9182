import type { EvidenceRow } from '@evals/persistence';

/** `count` evidence rows of one run, a quarter of them failed, as the evidence benchmarks insert them. */
export function evidenceRows(runId: string, count: number, caseId: (i: number) => string = (i) => `c${i}`): EvidenceRow[] {
  const at = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => ({
    run_id: runId,
    case_id: caseId(i),
    scorer: 'exact',
    scorer_version: '1.0.0',
    score: i % 4 === 3 ? 0 : 1,
    passed: i % 4 !== 3,
    label: i % 4 === 3 ? 'mismatch' : 'match',
    detail_hash: i.toString(16).padStart(64, '0'),
    output_chars: 200,
    scored_at: at,
  }));
}
