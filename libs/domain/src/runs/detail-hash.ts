import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

// One key per process in practice (EVALS_HMAC_SECRET): a KeyObject made once saves importing the secret on
// every call, about a third of a short output's HMAC. Bounded anyway, should a caller pass many secrets.
const keys = new Map<string, KeyObject>();
const MAX_KEYS = 8;

function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    // The same bytes createHmac takes from a string key (UTF-8), so every hash is what it always was.
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

/**
 * D2: the one-way, keyed hash of a case's detail (the candidate output). Keyed so that a short output
 * ("yes", "42") cannot be recovered by hashing guesses; lets two runs tell "same output" without either
 * storing it.
 */
export function detailHash(secret: string, output: string): string {
  return createHmac('sha256', keyOf(secret)).update(output, 'utf8').digest('hex');
}

const keyIds = new Map<string, string>();

/**
 * Names the key of detail hashes without revealing it: a keyed hash of a fixed text, shortened. A work
 * message that carries the ingestion's detail hashes says which key made them, and the worker uses them only
 * when that is its own key - so evidence hashes are always the worker's key's, as when it computed them all.
 */
export function detailKeyId(secret: string): string {
  let id = keyIds.get(secret);
  if (id === undefined) {
    if (keyIds.size >= MAX_KEYS) keyIds.clear();
    id = detailHash(secret, 'evals detail-hash key id').slice(0, 16);
    keyIds.set(secret, id);
  }
  return id;
}
