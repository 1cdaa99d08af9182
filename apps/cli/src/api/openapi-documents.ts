import 'reflect-metadata';
import { Module, RequestMethod, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApiDocument, HealthController, KeysController, MetricsController, ProjectsController } from '@evals/platform';
// Each app's public entry (its src/index.ts), as the all-in-one composes them.
import { IngestionModule, type IngestionConfig } from '../../../ingestion/src';
import { ReadModelModule, type ReadModelConfig } from '../../../read-model/src';
import { RegressionModule } from '../../../regression/src';

/**
 * The OpenAPI documents of the deployments, built from the apps' real controllers without a database or a
 * bus: every constructor dependency is an empty stand-in, since describing a route never calls it. The same
 * generator (buildOpenApiDocument) serves /openapi.json at run time, so these are the served documents.
 */
export type ApiName = 'ingestion' | 'read-model' | 'regression' | 'evals';

const PLATFORM: Array<Type<unknown>> = [HealthController, MetricsController];

/** The controllers each deployment maps: the four apps' modules, and `evals serve` composing them. */
export function controllersOf(name: ApiName): Array<Type<unknown>> {
  const ingestion = (IngestionModule.features({} as IngestionConfig).controllers ?? []) as Array<Type<unknown>>;
  const read = (ReadModelModule.features({} as ReadModelConfig).controllers ?? []) as Array<Type<unknown>>;
  const regression = (RegressionModule.features(null).controllers ?? []) as Array<Type<unknown>>;
  switch (name) {
    case 'ingestion':
      return [...PLATFORM, KeysController, ProjectsController, ...ingestion];
    case 'read-model':
      return [...PLATFORM, ...read];
    case 'regression':
      return [...PLATFORM, ...regression];
    case 'evals':
      return [...PLATFORM, KeysController, ProjectsController, ...ingestion, ...read, ...regression];
  }
}

// Nest's metadata keys (@nestjs/common constants) and @nestjs/swagger's exclusion keys.
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';
const SELF_DECLARED_DEPS = 'self:paramtypes';
const PARAM_TYPES = 'design:paramtypes';
const EXCLUDE_CONTROLLER = 'swagger/apiExcludeController';
const EXCLUDE_ENDPOINT = 'swagger/apiExcludeEndpoint';

export interface MappedRoute {
  readonly method: string;
  /** OpenAPI style: `/v1/runs/{id}`. */
  readonly path: string;
  readonly handler: string;
  /** Left out of the document on purpose (@ApiExcludeController / @ApiExcludeEndpoint: the dashboard's pages). */
  readonly excluded: boolean;
}

/** Every route the controllers map, as the router registers them. */
export function mappedRoutes(controllers: ReadonlyArray<Type<unknown>>): MappedRoute[] {
  const out: MappedRoute[] = [];
  for (const type of controllers) {
    const base = [Reflect.getMetadata(PATH_METADATA, type) as string | string[] | undefined].flat()[0] ?? '';
    const classExcluded = Boolean((Reflect.getMetadata(EXCLUDE_CONTROLLER, type) as unknown[] | undefined)?.[0]);
    const proto = type.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = proto[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (paths === undefined) continue;
      const method = RequestMethod[(Reflect.getMetadata(METHOD_METADATA, handler) as number | undefined) ?? RequestMethod.GET] ?? 'GET';
      const excluded = classExcluded || Boolean((Reflect.getMetadata(EXCLUDE_ENDPOINT, handler) as { disable?: boolean } | undefined)?.disable);
      for (const p of [paths].flat()) {
        const joined = `/${[base, p].map((s) => s.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
        out.push({ method, path: joined.replace(/:([A-Za-z0-9_]+)/g, '{$1}'), handler: `${type.name}.${name}`, excluded });
      }
    }
  }
  return out;
}

/** Stand-ins for every constructor dependency of the controllers (by class or by @Inject token). */
function standIns(controllers: ReadonlyArray<Type<unknown>>): Array<{ provide: unknown; useValue: unknown }> {
  const tokens = new Set<unknown>();
  for (const type of controllers) {
    const declared = (Reflect.getMetadata(SELF_DECLARED_DEPS, type) as Array<{ index: number; param: unknown }> | undefined) ?? [];
    const types = (Reflect.getMetadata(PARAM_TYPES, type) as unknown[] | undefined) ?? [];
    types.forEach((t, i) => tokens.add(declared.find((d) => d.index === i)?.param ?? t));
  }
  return [...tokens].filter((t) => t !== undefined && t !== Object).map((provide) => ({ provide, useValue: {} }));
}

/** The document `name` serves at /openapi.json. */
export async function buildApiDocument(name: ApiName): Promise<OpenAPIObject> {
  const controllers = controllersOf(name);
  @Module({ controllers, providers: standIns(controllers) as never })
  class DescribedApi {}
  const app = await NestFactory.create(DescribedApi, { logger: false, abortOnError: false });
  try {
    return buildOpenApiDocument(app, name, '0.1.0');
  } finally {
    await app.close();
  }
}
