import type { VerdictCache } from '@evals/domain';

/**
 * What every verdict cache adapter must do (J6, D1), run against Redis (cached-judge.int-spec.ts) and the
 * in-memory cache of the embedded mode (memory-verdict-cache.spec.ts), so neither drifts.
 */
export function verdictCacheContract(label: string, open: () => Promise<{ cache: VerdictCache; raw(key: string): Promise<string | null>; teardown(): Promise<void> }>): void {
  describe(`contract: verdict cache (${label})`, () => {
    let subject: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      subject = await open();
    });
    afterEach(async () => {
      await subject.teardown();
    });

    it('returns what was stored under the key, and null for another key', async () => {
      await subject.cache.set('k1', { verdict: 'pass', score: 0.75 });
      expect(await subject.cache.get('k1')).toEqual({ verdict: 'pass', score: 0.75 });
      expect(await subject.cache.get('k2')).toBeNull();
    });

    it('stores exactly {verdict, score}, whatever else the caller passes (D1)', async () => {
      const canary = 'CANARY-verdict-cache-7f3a';
      await subject.cache.set('k1', { verdict: 'fail', score: 0, reason: canary, output: canary } as never);
      const raw = await subject.raw('k1');
      expect(raw === null || !raw.includes(canary)).toBe(true);
      expect(await subject.cache.get('k1')).toEqual({ verdict: 'fail', score: 0 });
    });

    it('refuses a verdict outside the vocabulary or a score outside [0, 1]', async () => {
      await expect(subject.cache.set('k1', { verdict: 'maybe', score: 0.5 } as never)).rejects.toThrow(RangeError);
      await expect(subject.cache.set('k1', { verdict: 'pass', score: 1.5 })).rejects.toThrow(RangeError);
      expect(await subject.cache.get('k1')).toBeNull();
    });

    it('overwrites an entry stored again under the same key', async () => {
      await subject.cache.set('k1', { verdict: 'pass', score: 1 });
      await subject.cache.set('k1', { verdict: 'fail', score: 0.25 });
      expect(await subject.cache.get('k1')).toEqual({ verdict: 'fail', score: 0.25 });
    });
  });
}
