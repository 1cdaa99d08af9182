import { scorerNames, scorerOptionSchemas, type ScorerName } from '@evals/scorers';
import type { ApiPropertyOptions } from '@nestjs/swagger';

/*
 * A scorer spec in the OpenAPI document: `{type, ...options}` (docs/scorers.md), one object schema per
 * registered scorer, built from the registry's options schemas (@evals/scorers `scorerOptionSchemas`) so
 * the document and `validateScorerSpec` cannot drift (scorer-spec.schema.spec.ts holds them together).
 */

/** The object schema of one scorer's spec: `type` its name, its options typed, no other key. */
export function scorerSpecSchema(name: ScorerName): Record<string, unknown> {
  const options = scorerOptionSchemas[name];
  return {
    type: 'object',
    title: name,
    properties: { type: { type: 'string', enum: [name] }, ...options.properties },
    required: ['type', ...(options.required ?? [])],
    ...(options.not === undefined ? {} : { not: options.not }),
    // Every scorer refuses an option it does not take (SCORER_OPTION_UNKNOWN).
    additionalProperties: false,
  };
}

/** A scorer spec: one of the registered scorers' spec schemas, told apart by `type`. */
export const SCORER_SPEC_PROPERTY = {
  oneOf: scorerNames.map(scorerSpecSchema),
  discriminator: { propertyName: 'type' },
} as const satisfies ApiPropertyOptions;
