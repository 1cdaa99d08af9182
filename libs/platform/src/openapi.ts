import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/**
 * X1: the OpenAPI document of an app's HTTP API, generated from its controllers at boot and served at
 * `/openapi.json` (and a browsable UI at `/docs`). Request and response shapes are described in prose in
 * docs/ (gate.md, read-model.md, ...); the document gives the routes, parameters and tiers.
 */
export function serveOpenApi(app: INestApplication, name: string, version: string): void {
  const config = new DocumentBuilder()
    .setTitle(`evals ${name}`)
    .setDescription(`The ${name} API of the evals service. Bearer API keys; see docs/security.md.`)
    .setVersion(version)
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json' });
}
