import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiProperty } from '@nestjs/swagger';
import { ApiRoute, buildOpenApiDocument, RequireTier } from '@evals/platform';
import { completenessProblems, routeProblems } from './openapi-check';
import { mappedRoutes } from './openapi-documents';

const ROOT = path.resolve(__dirname, '../../../..');

class WidgetBody {
  @ApiProperty() name!: string;
}

class WidgetDto {
  @ApiProperty() id!: string;
}

@Controller('v1/widgets')
class DocumentedController {
  @ApiRoute({ tier: 'operator', summary: 'make one', body: WidgetBody, ok: { status: 201, type: WidgetDto, description: 'made' }, errors: ['INVALID_REQUEST'] })
  @Post()
  make(@Body() body: WidgetBody): WidgetDto {
    return { id: body.name };
  }
}

/** A route added the old way: a tier for access control, but no DTO and no description. */
@Controller('v1/gadgets')
class UndocumentedController {
  @RequireTier('operator')
  @Post()
  make(@Body() body: unknown): Record<string, unknown> {
    return { body };
  }

  @RequireTier('viewer')
  @Get()
  list(): unknown[] {
    return [];
  }
}

async function documentOf(controllers: Array<new (...args: never[]) => unknown>) {
  @Module({ controllers })
  class M {}
  const app = await NestFactory.create(M, { logger: false });
  try {
    return buildOpenApiDocument(app, 'test', '0.0.0');
  } finally {
    await app.close();
  }
}

describe('unit: the OpenAPI documents are complete, valid and used (X1, issue 16)', () => {
  it('a route declared with ApiRoute is complete: body, answers, error codes by status, tier and bearer', async () => {
    const doc = await documentOf([DocumentedController]);
    expect(completenessProblems(doc)).toEqual([]);
    expect(routeProblems(doc, mappedRoutes([DocumentedController]))).toEqual([]);
    const op = (doc.paths['/v1/widgets'] as any).post;
    expect(op['x-evals-tier']).toBe('operator');
    // 404: the guard's PROJECT_NOT_FOUND, on every keyed route (issue 30), with the header that names the project.
    expect(Object.keys(op.responses).sort()).toEqual(['201', '400', '401', '403', '404', '413', '429', '431', '500']);
    expect(op.responses['404'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['PROJECT_NOT_FOUND']);
    expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'X-Evals-Project', in: 'header', required: false })]));
    expect(op.responses['400'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['INVALID_REQUEST', 'MALFORMED_JSON', 'BODY_TOO_DEEP']);
    expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    expect(doc.info.title).toBe('evals test');
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('a route added without its DTOs fails: no ApiRoute, no body schema, no answer schema', async () => {
    const doc = await documentOf([DocumentedController, UndocumentedController]);
    const problems = completenessProblems(doc);
    expect(problems).toEqual(
      expect.arrayContaining([
        'POST /v1/gadgets: not declared with ApiRoute (no x-evals-tier)',
        'POST /v1/gadgets: no request body schema',
        'GET /v1/gadgets: not declared with ApiRoute (no x-evals-tier)',
      ]),
    );
    expect(problems.some((p) => p.startsWith('POST /v1/widgets'))).toBe(false);
  });

  it('the document maps the routes, none missing and none extra', async () => {
    const doc = await documentOf([DocumentedController]);
    expect(routeProblems(doc, mappedRoutes([DocumentedController, UndocumentedController]))).toEqual(['POST /v1/gadgets: mapped but not in the document', 'GET /v1/gadgets: mapped but not in the document']);
    expect(routeProblems(await documentOf([DocumentedController, UndocumentedController]), mappedRoutes([DocumentedController]))).toHaveLength(2);
  });

  it('npm run openapi --check: every app and `evals serve` validate as OpenAPI 3, are complete, map their routes, and the committed client is current', async () => {
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['-r', '@swc-node/register', 'apps/cli/src/api/openapi.script.ts', '--check'], { cwd: ROOT, timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    const report = JSON.parse(out.stdout.trim().split('\n').pop() || '{}') as { ok?: boolean; problems?: string[]; paths?: Record<string, number> };
    expect({ problems: report.problems, stderr: out.stderr.slice(-2000) }).toEqual({ problems: [], stderr: '' });
    expect(out.code).toBe(0);
    expect(report.paths?.evals).toBeGreaterThanOrEqual(24);
  }, 150_000);
});
