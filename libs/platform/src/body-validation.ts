import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
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

function issuesOf(errors: readonly ValidationError[], parent: string, out: Array<{ field: string; constraint: string }>): void {
  for (const e of errors) {
    const field = parent ? `${parent}.${e.property}` : e.property;
    for (const constraint of Object.keys(e.constraints ?? {})) {
      // An unknown key is producer-chosen text: report where it is, never its name (D1).
      out.push(constraint === 'whitelistValidation' ? { field: parent || 'body', constraint: 'unknownField' } : { field, constraint });
    }
    if (e.children?.length) issuesOf(e.children, field, out);
  }
}

/** Validates a plain body against a class-validator DTO: the instance, or ApiError INVALID_REQUEST with every issue. */
export function validateBody<T extends object>(type: new () => T, body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
  const instance = plainToInstance(type, body, { enableImplicitConversion: false });
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true, validationError: { target: false, value: false } });
  const issues: Array<{ field: string; constraint: string }> = [];
  issuesOf(errors, '', issues);
  if (issues.length > 0) {
    throw new ApiError('INVALID_REQUEST', `invalid request: ${issues.map((i) => `${i.field} (${i.constraint})`).join(', ')}`, issues[0]!.field, { issues });
  }
  return instance;
}
