/**
 * The dashboard's number formats (docs/dashboard.md): one rule per kind of number, the same on every page,
 * and the rule the browser tests read the screen with. The page's module is plain JavaScript (no build
 * step), loaded here through the test transform.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dom = require('./assets/dom.js') as {
  pct(x: number | null): string;
  pp(x: number): string;
  interval(lower: number, upper: number): string;
  ppInterval(lower: number, upper: number): string;
  num3(x: number | null): string;
  methodName(m: string): string;
  changesText(c: unknown): string;
  when(iso: string | null): string;
};

describe('unit: the dashboard formats numbers one way (UI1, GT6)', () => {
  it('rates in % with one decimal, differences in signed percentage points, scores with three decimals', () => {
    expect(dom.pct(2 / 12)).toBe('16.7%');
    expect(dom.pct(null)).toBe('n/a');
    expect(dom.interval(0.04696514218385378, 0.4480308622529734)).toBe('4.7%–44.8%');
    expect(dom.pp(-0.8181818181818182)).toBe('-81.8 pp');
    expect(dom.pp(0.05)).toBe('+5.0 pp');
    expect(dom.ppInterval(-0.9486323102539148, -0.4256065573197056)).toBe('-94.9 pp to -42.6 pp');
    expect(dom.num3(0.1666666)).toBe('0.167');
    expect(dom.when('2026-12-01T15:15:31.905Z')).toBe('2026-12-01 15:15:31Z');
  });

  it('names the method that decided, and what changed since the baseline', () => {
    expect(dom.methodName('newcombe_paired_10')).toBe('Newcombe paired method 10');
    expect(dom.methodName('newcombe_hybrid_score')).toBe('Newcombe hybrid score');
    expect(dom.changesText({ anything_changed: false, suite_version: null, scorer_versions: [], judge_model: null, prompt_version: null })).toBe('nothing (same suite version, judge and scorers)');
    expect(
      dom.changesText({
        anything_changed: true,
        suite_version: { baseline: 1, run: 2 },
        scorer_versions: [{ scorer: 'exact', baseline: '1.0.0', run: '1.1.0' }],
        judge_model: null,
        prompt_version: { baseline: 'judge-v1', run: 'judge-v2' },
      }),
    ).toBe('suite version 1 → 2; judge prompt judge-v1 → judge-v2; scorer exact 1.0.0 → 1.1.0');
  });
});
