import { mergeHistory, newestFirst } from './history';

const at = (run_id: string, completed_at: string) => ({ run_id, completed_at });

describe('a history merged with a micro-batch\'s verdicts (issue 28, G4)', () => {
  it('orders newest first, then by run id descending, as run_verdicts does', () => {
    const rows = [at('a', '2026-01-01T00:00:00.000Z'), at('c', '2026-01-02T00:00:00.000Z'), at('b', '2026-01-02T00:00:00.000Z')];
    expect([...rows].sort(newestFirst).map((r) => r.run_id)).toEqual(['c', 'b', 'a']);
  });

  it('puts each added row where the table would, and keeps the first `limit`', () => {
    const read = [at('r3', '2026-01-03T00:00:00.000Z'), at('r1', '2026-01-01T00:00:00.000Z')];
    const added = [at('x4', '2026-01-04T00:00:00.000Z'), at('x2', '2026-01-02T00:00:00.000Z')];
    expect(mergeHistory(read, added, 20).map((r) => r.run_id)).toEqual(['x4', 'r3', 'x2', 'r1']);
    expect(mergeHistory(read, added, 3).map((r) => r.run_id)).toEqual(['x4', 'r3', 'x2']);
    // Older than a full page: not in it.
    expect(mergeHistory(read, [at('x0', '2025-12-31T00:00:00.000Z')], 2).map((r) => r.run_id)).toEqual(['r3', 'r1']);
  });

  it('a page with nothing added is the page read', () => {
    const read = [at('r2', '2026-01-02T00:00:00.000Z'), at('r1', '2026-01-01T00:00:00.000Z')];
    expect(mergeHistory(read, [], 20)).toEqual(read);
    expect(mergeHistory(read, [], 1)).toEqual([read[0]]);
  });
});
