import Ajv, { type ValidateFunction } from 'ajv';
import { MAX_UTF8_BYTES_KEYWORD } from './asyncapi-schema';
import type { AsyncApiDocument } from './asyncapi';
import { isTimestamp, utf8ByteLength } from './limits';

/**
 * A JSON Schema validator (Ajv, draft-07) for the message payloads of an AsyncAPI document, as a consumer in
 * another team would build one from docs/asyncapi.json. `date-time` and `x-max-utf8-bytes` are given the
 * decoder's meaning so that the schema, not a weaker reading of it, is what is tested.
 */
export function payloadValidators(doc: AsyncApiDocument): (schema: string) => ValidateFunction {
  const ajv = new Ajv({ strict: true, allErrors: true });
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => isTimestamp(s) });
  ajv.addKeyword({
    keyword: MAX_UTF8_BYTES_KEYWORD,
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => utf8ByteLength(data) <= max,
  });
  // Local references name components.schemas; each becomes a schema of its own, referred to by name.
  for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(relink(schema) as object, name);
  const cache = new Map<string, ValidateFunction>();
  return (schema: string) => {
    let validate = cache.get(schema);
    if (validate === undefined) {
      const message = doc.components.messages[schema] as { payload?: unknown } | undefined;
      if (message?.payload === undefined) throw new Error(`no message ${schema} in the document`);
      validate = ajv.compile(relink(message.payload) as object);
      cache.set(schema, validate);
    }
    return validate;
  };
}

function relink(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relink);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '') : relink(v)]),
  );
}
