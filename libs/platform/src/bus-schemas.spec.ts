import { buildAsyncApiDocument } from '@evals/contracts';
import { addReferencedSchemas, busPayloadSchema, busSchemas, toOpenApi30 } from './bus-schemas';

/**
 * A stored bus payload answered over HTTP (a finding) is described by the bus's own schema, converted to
 * OpenAPI 3.0. What must hold: the conversions OpenAPI 3.0 needs, and exactly the referenced schemas copied.
 */
describe('unit: bus payload schemas in the OpenAPI document', () => {
  it('turns a null alternative into nullable, beside allOf for a reference, and exclusive bounds into their boolean form', () => {
    expect(toOpenApi30({ anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }], description: 'd' })).toEqual({ type: 'string', maxLength: 3, nullable: true, description: 'd' });
    expect(toOpenApi30({ anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'null' }] })).toEqual({ nullable: true, allOf: [{ $ref: '#/components/schemas/X' }] });
    expect(toOpenApi30({ type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 })).toEqual({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true });
    expect(toOpenApi30({ type: 'object', required: ['a'], properties: { a: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } })).toEqual({
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'integer', nullable: true } },
    });
    // A real union (not a null alternative) stays a union.
    expect(toOpenApi30({ anyOf: [{ type: 'string' }, { type: 'integer' }] })).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer' }] });
  });

  it('copies the referenced payload schema and what it references, converted, and nothing else', () => {
    const bus = buildAsyncApiDocument().components.schemas as Record<string, unknown>;
    const schemas: Record<string, unknown> = { Own: { type: 'object' } };
    const document = { paths: { '/f': { get: { responses: { 200: { content: { 'application/json': { schema: busPayloadSchema('FindingReportedV1', 'x') } } } } } } }, components: { schemas } };
    addReferencedSchemas(document, schemas, [busSchemas]);
    expect(Object.keys(schemas).sort()).toEqual(['FindingReportedV1', 'Own', 'PairedDiffV1', 'PassCountsV1', 'PassRateDiffV1']);
    expect(schemas.FindingReportedV1).toEqual(toOpenApi30(bus.FindingReportedV1));
    expect(JSON.stringify(schemas)).not.toMatch(/"type":"null"|"exclusiveMinimum":0/);
  });

  it('leaves a reference to a name neither document defines for the document validator to refuse', () => {
    const schemas: Record<string, unknown> = {};
    addReferencedSchemas({ a: { $ref: '#/components/schemas/Nowhere' } }, schemas, [busSchemas]);
    expect(schemas).toEqual({});
  });
});
