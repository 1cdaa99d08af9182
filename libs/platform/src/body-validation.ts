import { validateDto } from '@evals/contracts';
import { ApiError } from './api-error';

const VALIDATE_AT_EDGE = 'evals:validate-at-edge';

/**
 * Marks a request DTO whose class-validator rules are the whole of its shape check: the global pipe
 * (EdgeTextPipe) validates such a body before the handler runs, 400 INVALID_REQUEST naming the first field.
 * Bodies whose rules live elsewhere - the bus contract's decoder for runs, validateSuite for suites, the
 * services' parsers that answer domain codes - are not marked, and reach their validator unchanged.
 */
export function ValidateAtEdge(): ClassDecorator {
  return (target) => Reflect.defineMetadata(VALIDATE_AT_EDGE, true, target);
}

export function isValidatedAtEdge(type: unknown): type is new () => object {
  return typeof type === 'function' && Reflect.getMetadata(VALIDATE_AT_EDGE, type) === true;
}

/**
 * Validates a plain body against a class-validator DTO with the bus edge's own validator (`validateDto` of
 * libs/contracts): the same depth limit, the same refusal of prototype keys (`__proto__`, `constructor`,
 * `prototype`) anywhere in the tree before class-transformer walks it, the same issue vocabulary. Answers
 * the DTO with the declared fields, or ApiError INVALID_REQUEST with every issue.
 */
export function validateBody<T extends object>(type: new () => T, body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
  const result = validateDto(type, body, '', { unknownFields: 'refuse', dropNulls: false });
  if (!result.ok) {
    // An issue at the root (an unknown or forbidden key) is reported on `body`, never by the key's name (D1).
    const issues = result.issues.map((i) => ({ field: i.field || 'body', constraint: i.constraint }));
    throw new ApiError('INVALID_REQUEST', `invalid request: ${issues.map((i) => `${i.field} (${i.constraint})`).join(', ')}`, issues[0]!.field, { issues });
  }
  // An instance of the DTO, as the handler's parameter type says, holding only the declared fields checked above.
  return Object.assign(new type(), result.value);
}
