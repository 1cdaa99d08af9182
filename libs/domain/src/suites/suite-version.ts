import { SuiteInputError } from './suite-error';
import { SUITE_HASH_PATTERN } from './suite-hash';

export interface StoredSuiteVersion {
  readonly version: number;
  readonly content_hash: string;
}

export type SuiteVersionDecision =
  /** The content equals the latest version: the push is idempotent and returns it (V2). */
  | { readonly kind: 'existing'; readonly version: number }
  /**
   * New content: mint `version` (latest + 1). `same_content_as` names the most recent OLDER version with
   * identical content when there is one: the push is a revert, told to the user as such.
   */
  | { readonly kind: 'new'; readonly version: number; readonly same_content_as?: number };

/**
 * The versioning rule of V2, for a push of content hashing to `candidateHash` onto a suite whose stored
 * versions are `existing` (any order; empty for a new suite).
 *
 * Only the LATEST version is compared. Pushing the latest content again returns it, however often.
 * Pushing the content of an older version mints a new version (a revert): returning the old version
 * instead would leave the newer, unwanted content as the latest, so every run that does not pin a version
 * would go on using exactly what the user just tried to undo. Versions stay append-only either way.
 *
 * The store must still make minting atomic (a unique (suite, version) key, retry on conflict), and must not
 * put a unique key on (suite, content_hash): a revert repeats a hash on purpose.
 */
export function nextSuiteVersion(
  existing: readonly StoredSuiteVersion[],
  candidateHash: string,
): SuiteVersionDecision {
  if (typeof candidateHash !== 'string' || !SUITE_HASH_PATTERN.test(candidateHash)) {
    throw new SuiteInputError('SUITE_HASH_INVALID', 'the candidate hash must be 64 lowercase hex characters');
  }
  const seen = new Set<number>();
  let latest: StoredSuiteVersion | undefined;
  for (const v of existing) {
    if (!Number.isSafeInteger(v.version) || v.version < 1) {
      throw new SuiteInputError('SUITE_VERSIONS_INVALID', `version ${String(v.version)} is not a positive integer`);
    }
    if (seen.has(v.version)) throw new SuiteInputError('SUITE_VERSIONS_INVALID', `version ${v.version} appears twice`);
    if (typeof v.content_hash !== 'string' || !SUITE_HASH_PATTERN.test(v.content_hash)) {
      throw new SuiteInputError('SUITE_VERSIONS_INVALID', `version ${v.version} has a malformed content hash`);
    }
    seen.add(v.version);
    if (latest === undefined || v.version > latest.version) latest = v;
  }
  if (latest === undefined) return { kind: 'new', version: 1 };
  if (latest.content_hash === candidateHash) return { kind: 'existing', version: latest.version };
  const older = existing
    .filter((v) => v.content_hash === candidateHash)
    .reduce<number | undefined>((best, v) => (best === undefined || v.version > best ? v.version : best), undefined);
  return older === undefined
    ? { kind: 'new', version: latest.version + 1 }
    : { kind: 'new', version: latest.version + 1, same_content_as: older };
}
