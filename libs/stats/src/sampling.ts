import { StatsInputError } from './errors';

/**
 * A seeded pseudo-random source. Code that needs randomness (the gate's case sample, GT3) takes one of
 * these, never Math.random, so that the same seed reproduces the same choice on any machine.
 */
export interface Rng {
  /** Uniform in [0, 1), 32 bits of resolution. */
  next(): number;
  /** Uniform integer in [0, 2^32). */
  nextUint32(): number;
  /** Uniform integer in [0, maxExclusive), without modulo bias; 1 <= maxExclusive <= 2^32. */
  nextInt(maxExclusive: number): number;
}

const TWO_32 = 4294967296;

/**
 * cyrb128 (bryc, github.com/bryc/code, jshash/PRNGs.md): a 128-bit string hash, here used only to spread a
 * seed string into four 32-bit words of state. It reads UTF-16 code units and uses only Math.imul, xor and
 * shifts, which are exactly specified by ECMAScript, so it gives the same words on every engine and
 * platform. It is not cryptographic, and need not be: the seed is public, the goal is reproducibility.
 */
export function cyrb128(str: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < str.length; i++) {
    const k = str.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/**
 * A PRNG from a seed string: cyrb128 for the state, then Chris Doty-Humphrey's sfc32 (from PractRand),
 * a small fast generator that passes PractRand and BigCrush and, like the hash, uses only 32-bit integer
 * operations with exactly specified results. The first outputs are discarded because a hashed state can
 * start with correlated words.
 *
 * Changing anything here changes which cases every existing gate seed selects; the golden values in
 * sampling.spec.ts pin it.
 */
export function createRng(seed: string): Rng {
  if (typeof seed !== 'string' || seed.length === 0) {
    throw new StatsInputError('INVALID_SEED', 'a seed must be a non-empty string');
  }
  let [a, b, c, d] = cyrb128(seed);
  const nextUint32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 15; i++) nextUint32();
  return {
    nextUint32,
    next: () => nextUint32() / TWO_32,
    nextInt(maxExclusive: number): number {
      if (!Number.isSafeInteger(maxExclusive) || maxExclusive < 1 || maxExclusive > TWO_32) {
        throw new StatsInputError('INVALID_OPTION', `nextInt needs an integer bound in [1, 2^32], got ${maxExclusive}`);
      }
      // Reject the top sliver of the 2^32 range that does not divide evenly, so every value is equally likely.
      const limit = TWO_32 - (TWO_32 % maxExclusive);
      let u = nextUint32();
      while (u >= limit) u = nextUint32();
      return u % maxExclusive;
    },
  };
}

/**
 * A deterministic sample of `size` items without replacement (GT3): same items, size and seed give the same
 * sample on any machine. The chosen items keep their original relative order, so a sample reads like the
 * suite it came from. `size >= items.length` returns all items (a copy).
 *
 * Method: a partial Fisher-Yates shuffle of the indices, drawing each swap with an unbiased `nextInt`, so
 * every subset of the given size is equally likely.
 */
export function seededSample<T>(items: readonly T[], size: number, seed: string): T[] {
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new StatsInputError('INVALID_SIZE', `sample size must be an integer >= 0, got ${String(size)}`);
  }
  const rng = createRng(seed);
  const n = items.length;
  if (size >= n) return items.slice();
  const indices = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < size; i++) {
    const j = i + rng.nextInt(n - i);
    const tmp = indices[i];
    indices[i] = indices[j];
    indices[j] = tmp;
  }
  return indices
    .slice(0, size)
    .sort((x, y) => x - y)
    .map((i) => items[i]);
}
