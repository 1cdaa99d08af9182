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

/** The component name of one scorer's spec schema: `exact` -> `ExactScorerSpec`, `llm_judge` -> `LlmJudgeScorerSpec`. */
export function scorerSpecComponent(name: ScorerName): string {
  return `${name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())}ScorerSpec`;
}

/**
 * The components a document that describes a scorer spec carries: one per scorer, and `ScorerSpec`, the
 * union told apart by `type` - written once, referenced by every property that holds a spec
 * (buildOpenApiDocument adds them to a document that references `ScorerSpec`).
 */
export const SCORER_SPEC_COMPONENTS: Readonly<Record<string, Record<string, unknown>>> = Object.freeze({
  ...Object.fromEntries(scorerNames.map((name) => [scorerSpecComponent(name), scorerSpecSchema(name)])),
  ScorerSpec: {
    oneOf: scorerNames.map((name) => ({ $ref: `#/components/schemas/${scorerSpecComponent(name)}` })),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(scorerNames.map((name) => [name, `#/components/schemas/${scorerSpecComponent(name)}`])) },
  },
});

/** A property that holds a scorer spec: a reference to the `ScorerSpec` component. */
export const SCORER_SPEC_PROPERTY = {
  oneOf: [{ $ref: '#/components/schemas/ScorerSpec' }],
} as const satisfies ApiPropertyOptions;
