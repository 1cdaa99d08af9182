import { ApiError } from '@evals/platform';

/** `offset` (default 0) and `limit` (default 50, at most 500) of a paged list; 400 INVALID_REQUEST otherwise. */
export function pageParams(offset: string | undefined, limit: string | undefined): { offset: number; limit: number } {
  const o = offset === undefined ? 0 : Number(offset);
  const l = limit === undefined ? 50 : Number(limit);
  if (!Number.isInteger(o) || o < 0 || o > 10_000_000) throw new ApiError('INVALID_REQUEST', 'offset must be a whole number from 0', 'offset');
  if (!Number.isInteger(l) || l < 1 || l > 500) throw new ApiError('INVALID_REQUEST', 'limit must be a whole number from 1 to 500', 'limit');
  return { offset: o, limit: l };
}
