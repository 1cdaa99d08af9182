import { ValidateBy, type ValidationOptions } from 'class-validator';
import { isSafeId, isSuiteKey, isTimestamp, isToken, utf8ByteLength } from '../limits';

/*
 * Custom constraints, each one name in the reason vocabulary of docs/contracts.md. One decorator per rule
 * (rather than IsString + Length + Matches) so that a bad id yields one issue, `isSafeId`, not three.
 * Default messages are never used (validation runs with dismissDefaultMessages): reasons are built from
 * constraint names only, so no value can leak into a dead-letter reason (D1).
 */

export function IsSafeId(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isSafeId', validator: { validate: (v: unknown) => isSafeId(v) } }, options);
}

export function IsSuiteKey(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isSuiteKey', validator: { validate: (v: unknown) => isSuiteKey(v) } }, options);
}

export function IsToken(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isToken', validator: { validate: (v: unknown) => isToken(v) } }, options);
}

export function IsTimestamp(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isTimestamp', validator: { validate: (v: unknown) => isTimestamp(v) } }, options);
}

/** A string of at most `max` UTF-8 bytes. The name `maxUtf8Bytes` maps to OUTPUT_TOO_LARGE. */
export function MaxUtf8Bytes(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxUtf8Bytes',
      constraints: [max],
      // Cheap bound first: a string of n UTF-16 units has at most 3n UTF-8 bytes.
      validator: {
        validate: (v: unknown) => typeof v !== 'string' || v.length * 3 <= max || utf8ByteLength(v) <= max,
      },
    },
    options,
  );
}

/** A safe integer in [min, max]: counts that stay exact in a double. */
export function IsCount(min = 0, max = Number.MAX_SAFE_INTEGER, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCount',
      constraints: [min, max],
      validator: {
        validate: (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max,
      },
    },
    options,
  );
}

/** A finite number in [min, max] inclusive. */
export function IsNumberInRange(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isNumberInRange',
      constraints: [min, max],
      validator: {
        validate: (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max,
      },
    },
    options,
  );
}

/** A finite number >= 0 (costs). */
export function IsNonNegativeNumber(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isNonNegativeNumber',
      validator: { validate: (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 },
    },
    options,
  );
}

/** A confidence level strictly inside (0, 1), e.g. 0.95. */
export function IsConfidenceLevel(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isConfidenceLevel',
      validator: { validate: (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0 && v < 1 },
    },
    options,
  );
}
