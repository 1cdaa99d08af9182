import { assertProbability, clamp } from './errors';

export interface RoganGladenResult {
  /** Estimated true prevalence in [0, 1], or null when the test is uninformative. */
  readonly corrected: number | null;
  readonly reason?: 'youden_not_positive';
}

/**
 * Rogan & Gladen (1978) correction of an apparent rate p measured by an imperfect classifier (e.g. a
 * judge's pass rate) for that classifier's sensitivity and specificity:
 *   corrected = (p + spec - 1) / (sens + spec - 1)
 * The raw estimate leaves [0, 1] when p is not consistent with the given sens/spec (sampling noise), so it
 * is clamped. With Youden's J = sens + spec - 1 <= 0 the classifier is no better than chance (or inverted)
 * and the correction is undefined: null with `youden_not_positive`.
 */
export function roganGladen(p: number, sens: number, spec: number): RoganGladenResult {
  assertProbability(p, 'p');
  assertProbability(sens, 'sensitivity');
  assertProbability(spec, 'specificity');
  const youden = sens + spec - 1;
  if (youden <= 0) return { corrected: null, reason: 'youden_not_positive' };
  return { corrected: clamp((p + spec - 1) / youden, 0, 1) };
}
