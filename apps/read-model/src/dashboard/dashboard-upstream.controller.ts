import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ApiError, ProjectScope, RequireTier } from '@evals/platform';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { DASHBOARD_SETTINGS, UPSTREAM_PREFIX, type DashboardSettings } from './dashboard.settings';

const FORWARD_TIMEOUT_MS = 15_000;

/**
 * The four-app deployment (docs/dashboard.md): gates live in the ingestion app, findings and judges in the
 * regression app. When DASHBOARD_INGESTION_URL / DASHBOARD_REGRESSION_URL are set, the read model forwards
 * the dashboard's few requests for them - a fixed list, GET plus the admin override - with the caller's
 * Authorization header, so the page needs one origin and no CORS, and the other app still checks the key
 * itself - and with the request's project as `X-Evals-Project` (issue 30), so the other app scopes the
 * request to the same project this one resolved (a project key's own; for a platform key, or with access
 * control off, the one it named, `default` when none). Unset (the embedded all-in-one, or a path-routing proxy in front), the page calls those routes on
 * its own origin and these answer 404 UPSTREAM_NOT_CONFIGURED.
 */
@ApiExcludeController()
@Controller(UPSTREAM_PREFIX.slice(1))
export class DashboardUpstreamController {
  constructor(@Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings) {}

  @RequireTier('viewer')
  @Get(['ingestion/v1/gates', 'ingestion/v1/gate/:id'])
  ingestionRead(@ProjectScope() project: string, @Req() req: ExpressRequest, @Res() res: ExpressResponse): Promise<void> {
    return this.forward(this.settings.ingestionUrl, 'ingestion', project, req, res);
  }

  @RequireTier('admin')
  @Post('ingestion/v1/gate/:id/override')
  @HttpCode(200)
  override(@ProjectScope() project: string, @Req() req: ExpressRequest, @Res() res: ExpressResponse, @Body() body: unknown): Promise<void> {
    return this.forward(this.settings.ingestionUrl, 'ingestion', project, req, res, body);
  }

  @RequireTier('viewer')
  @Get(['regression/v1/findings', 'regression/v1/findings/:id', 'regression/v1/judges'])
  regressionRead(@ProjectScope() project: string, @Req() req: ExpressRequest, @Res() res: ExpressResponse): Promise<void> {
    return this.forward(this.settings.regressionUrl, 'regression', project, req, res);
  }

  private async forward(base: string, app: string, project: string, req: ExpressRequest, res: ExpressResponse, body?: unknown): Promise<void> {
    if (!base) throw new ApiError('UPSTREAM_NOT_CONFIGURED', `no ${app} app is configured to forward to: this process serves its routes itself`);
    // req.originalUrl keeps the query string; only the prefix is replaced, so the path is one the list allows.
    const rest = req.originalUrl.slice(`${UPSTREAM_PREFIX}/${app}`.length);
    const target = new URL(rest, base.endsWith('/') ? base : `${base}/`);
    let upstream: globalThis.Response;
    try {
      upstream = await fetch(target, {
        method: req.method,
        headers: {
          accept: 'application/json',
          ...(typeof req.headers.authorization === 'string' ? { authorization: req.headers.authorization } : {}),
          // The project this app's guard resolved and checked, not the raw header: the other app resolves
          // the same key and header to the same project, or refuses it just as this one would have.
          'x-evals-project': project,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
    } catch {
      throw new ApiError('UPSTREAM_UNAVAILABLE', `the ${app} app did not answer`);
    }
    res.status(upstream.status);
    res.setHeader('Content-Type', upstream.headers.get('content-type') ?? 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(Buffer.from(await upstream.arrayBuffer()));
  }
}
