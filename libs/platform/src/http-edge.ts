import { verifyJsonDepth } from './body-depth';

/** What of a Nest Express application the edge needs (NestExpressApplication satisfies it). */
export interface BodyParserHost {
  useBodyParser(parser: 'json' | 'text', options: Record<string, unknown>): unknown;
}

/** Media types a suite can be pushed as, besides JSON (docs/suites.md). */
export const YAML_MEDIA_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'] as const;

/**
 * The request parsers of every app (created with `bodyParser: false`): JSON up to HTTP_BODY_LIMIT_MB whose
 * nesting is checked on the raw bytes before JSON.parse (400 BODY_TOO_DEEP, docs/http-api.md), and the YAML
 * text of a suite.
 */
export function useBodyParsers(app: BodyParserHost, bodyLimitMb: number, options: { yaml?: boolean } = {}): void {
  app.useBodyParser('json', { limit: `${bodyLimitMb}mb`, verify: verifyJsonDepth });
  if (options.yaml !== false) app.useBodyParser('text', { limit: `${bodyLimitMb}mb`, type: [...YAML_MEDIA_TYPES] });
}
