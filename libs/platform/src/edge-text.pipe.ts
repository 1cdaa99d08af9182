import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { ApiError } from './api-error';
import { isValidatedAtEdge, validateBody } from './body-validation';

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a text cannot be used as a key, an id or a filter: NUL (PostgreSQL refuses it) or a lone surrogate (not Unicode). */
export function unusableText(text: string): string | null {
  if (text.includes('\u0000')) return 'a NUL character';
  if (LONE_SURROGATE.test(text)) return 'a lone surrogate';
  return null;
}

/**
 * The global pipe of every app (APP_PIPE, InfrastructureModule). Path parameters and query strings: a value
 * with a NUL character or a lone surrogate is 400 INVALID_REQUEST naming the parameter, before any lookup
 * could hand it to the database (whose refusal would be a 500); a parameter declared `string` and given
 * twice is refused the same way. Bodies: a DTO marked @ValidateAtEdge is validated by its class-validator
 * rules; the others where their rules live (docs/http-api.md).
 */
@Injectable()
export class EdgeTextPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'body') return isValidatedAtEdge(metadata.metatype) ? validateBody(metadata.metatype, value) : value;
    if (metadata.type !== 'query' && metadata.type !== 'param') return value;
    const name = metadata.data ?? metadata.type;
    if (Array.isArray(value) && metadata.metatype === String) {
      throw new ApiError('INVALID_REQUEST', `${name} must be given once`, name);
    }
    for (const v of [value].flat()) {
      const problem = typeof v === 'string' ? unusableText(v) : null;
      if (problem) throw new ApiError('INVALID_REQUEST', `${name} contains ${problem}`, name);
    }
    return value;
  }
}

/**
 * For a body's free-text fields that are stored (a name, a rubric, a reason, a golden text): 400
 * INVALID_REQUEST naming the first that holds text the database cannot store. Outputs that are only
 * scored, never stored, are not passed here.
 */
export function refuseUnstorableText(fields: ReadonlyArray<readonly [field: string, value: unknown]>): void {
  for (const [field, value] of fields) {
    const problem = typeof value === 'string' ? unusableText(value) : null;
    if (problem) throw new ApiError('INVALID_REQUEST', `${field} contains ${problem}, which cannot be stored`, field);
  }
}
