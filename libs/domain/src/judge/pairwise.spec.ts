import { decidePairwise, pairwiseReport, type PairwiseCaseResult } from './pairwise';

describe('decidePairwise (J5)', () => {
  it.each([
    ['first', 'second', { winner: 'a', position_consistent: true }],
    ['second', 'first', { winner: 'b', position_consistent: true }],
    ['tie', 'tie', { winner: 'tie', position_consistent: true }],
    // Order-biased: always the first shown -> A in one order, B in the other.
    ['first', 'first', { winner: 'tie', position_consistent: false }],
    ['second', 'second', { winner: 'tie', position_consistent: false }],
    ['first', 'tie', { winner: 'tie', position_consistent: false }],
    ['tie', 'first', { winner: 'tie', position_consistent: false }],
  ] as const)('ab=%s ba=%s', (ab, ba, expected) => {
    expect(decidePairwise(ab, ba)).toEqual(expected);
  });

  it('declares a winner only when both orders agree', () => {
    const choices = ['first', 'second', 'tie'] as const;
    for (const ab of choices) {
      for (const ba of choices) {
        const d = decidePairwise(ab, ba);
        if (d.winner !== 'tie') expect(d.position_consistent).toBe(true);
      }
    }
  });
});

describe('pairwiseReport (J5, GT6)', () => {
  it('counts wins, losses, ties and position consistency with its denominator and Wilson interval', () => {
    const results: PairwiseCaseResult[] = [
      decidePairwise('first', 'second'),
      decidePairwise('first', 'second'),
      decidePairwise('second', 'first'),
      decidePairwise('tie', 'tie'),
      decidePairwise('first', 'first'),
      { error: 'judge_unparseable' },
    ];
    const r = pairwiseReport(results);
    expect(r).toMatchObject({ wins: 2, losses: 1, ties: 2, inconsistent_ties: 1, errors: 1, n: 5 });
    expect(r.position_consistency.consistent).toBe(4);
    expect(r.position_consistency.n).toBe(5);
    expect(r.position_consistency.rate).toBeCloseTo(0.8, 12);
    expect(r.position_consistency.lower).toBeGreaterThan(0.3);
    expect(r.position_consistency.lower).toBeLessThan(0.8);
    expect(r.position_consistency.upper).toBeGreaterThan(0.8);
    expect(r.position_consistency.upper).toBeLessThanOrEqual(1);
  });

  it('an always-first judge is measured as fully position-inconsistent and declares no winner', () => {
    const r = pairwiseReport(Array.from({ length: 20 }, () => decidePairwise('first', 'first')));
    expect(r).toMatchObject({ wins: 0, losses: 0, ties: 20, inconsistent_ties: 20, n: 20 });
    expect(r.position_consistency.rate).toBe(0);
    expect(r.position_consistency.lower).toBe(0);
  });

  it('no decided case: rate null with the whole interval', () => {
    const r = pairwiseReport([{ error: 'judge_timeout' }]);
    expect(r.position_consistency).toEqual({ rate: null, consistent: 0, n: 0, lower: 0, upper: 1 });
  });
});
