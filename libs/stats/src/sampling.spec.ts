import fc from 'fast-check';
import { createRng, cyrb128, seededSample } from './sampling';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('createRng and seededSample (GT3)', () => {
  it('GT3: golden values pin the hash and the generator (a change here reshuffles every gate seed)', () => {
    expect(cyrb128('gate-seed')).toEqual([1646378911, 599899683, 2312170391, 2118430156]);
    const rng = createRng('gate-seed');
    expect([rng.nextUint32(), rng.nextUint32(), rng.nextUint32()]).toEqual([602453863, 1400868837, 468016050]);
    expect(rng.next()).toBe(0.1257622903212905);
    expect(seededSample(range(100), 5, 'abc')).toEqual([4, 17, 21, 50, 88]);
  });

  it('cyrb128 uses every character: one-character changes give unrelated state', () => {
    const a = cyrb128('seed-1');
    const b = cyrb128('seed-2');
    expect(a.every((w) => Number.isInteger(w) && w >= 0 && w < 2 ** 32)).toBe(true);
    expect(a.filter((w, i) => w === b[i])).toEqual([]);
  });

  it('next() is in [0, 1) and nextInt(m) in [0, m), including the extremes of m', () => {
    const rng = createRng('bounds');
    for (let i = 0; i < 2000; i++) {
      const u = rng.next();
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      expect(rng.nextInt(1)).toBe(0);
      const v = rng.nextInt(7);
      expect(Number.isInteger(v) && v >= 0 && v < 7).toBe(true);
      const w = rng.nextInt(2 ** 32);
      expect(Number.isInteger(w) && w >= 0 && w < 2 ** 32).toBe(true);
    }
  });

  it('GT3: same seed, same sample', () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.nat({ max: 50 }), fc.string({ minLength: 1 }), (items, size, seed) => {
        expect(seededSample(items, size, seed)).toEqual(seededSample(items, size, seed));
      }),
    );
  });

  it('GT3: the sample is a subset of the right size, without replacement, in original order', () => {
    fc.assert(
      fc.property(fc.nat({ max: 300 }), fc.nat({ max: 350 }), fc.string({ minLength: 1 }), (n, size, seed) => {
        const s = seededSample(range(n), size, seed);
        expect(s).toHaveLength(Math.min(size, n));
        s.forEach((v, i) => {
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThan(n);
          if (i > 0) expect(v).toBeGreaterThan(s[i - 1] as number);
        });
      }),
    );
  });

  it('size >= length returns all items, as a copy; size 0 returns none', () => {
    const items = ['a', 'b', 'c'];
    const all = seededSample(items, 3, 's');
    expect(all).toEqual(items);
    expect(all).not.toBe(items);
    expect(seededSample(items, 10, 's')).toEqual(items);
    expect(seededSample(items, 0, 's')).toEqual([]);
    expect(seededSample([], 5, 's')).toEqual([]);
  });

  it('different seeds give different samples (20 fixed seeds, all distinct)', () => {
    const samples = range(20).map((i) => JSON.stringify(seededSample(range(100), 10, `seed-${i}`)));
    expect(new Set(samples).size).toBe(20);
  });

  it('different random seeds give different samples of 10 out of 200', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (s1, s2) => {
        fc.pre(s1 !== s2);
        expect(seededSample(range(200), 10, s1)).not.toEqual(seededSample(range(200), 10, s2));
      }),
    );
  });

  it('every item is equally likely to be chosen (4000 seeds, 5 of 10: within 5 standard deviations)', () => {
    const counts = new Array<number>(10).fill(0);
    const draws = 4000;
    for (let s = 0; s < draws; s++) for (const i of seededSample(range(10), 5, `uniform-${s}`)) counts[i] += 1;
    const expected = draws * 0.5;
    const sd = Math.sqrt(draws * 0.5 * 0.5);
    for (const c of counts) expect(Math.abs(c - expected)).toBeLessThan(5 * sd);
  });
});
