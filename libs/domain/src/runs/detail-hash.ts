import { createHmac } from 'node:crypto';

/**
 * D2: the one-way, keyed hash of a case's detail (the candidate output). Keyed so that a short output
 * ("yes", "42") cannot be recovered by hashing guesses; lets two runs tell "same output" without either
 * storing it.
 */
export function detailHash(secret: string, output: string): string {
  return createHmac('sha256', secret).update(output, 'utf8').digest('hex');
}
