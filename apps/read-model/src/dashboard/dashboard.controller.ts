import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ApiError, Public } from '@evals/platform';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { DASHBOARD_FILES, DashboardAssets, type DashboardAsset } from './dashboard-assets';
import { browserConfig, DASHBOARD_SETTINGS, type DashboardSettings } from './dashboard.settings';

/**
 * Only this origin's scripts, styles and requests: the page renders every value as text (never as HTML), and a
 * policy that forbids inline script makes an injected value inert even if one slipped through.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The dashboard's shell (issue 17, docs/dashboard.md): the page, its scripts and styles and the chart library.
 * Public, like /health: these files hold no evaluation data - every number the page shows comes from the
 * API, which asks for a viewer key (or none, on the loopback-only embedded default, as the API itself).
 */
@ApiExcludeController()
@Controller()
export class DashboardController {
  private readonly assets = new DashboardAssets();

  constructor(@Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings) {}

  /** Every page's URL answers with the same shell; its router reads the path, so each URL can be pasted. */
  @Public()
  @Get(['/', 'runs', 'runs/:id', 'scorecards', 'findings', 'gates', 'gates/:id', 'judges'])
  page(@Res() res: ExpressResponse): void {
    send(res, this.assets.shell(), 'no-cache');
  }

  @Public()
  @Get('dashboard/config.json')
  config(@Res() res: ExpressResponse): void {
    res.setHeader('Cache-Control', 'no-cache');
    res.json(browserConfig(this.settings));
  }

  @Public()
  @Get('dashboard/vendor/chart.umd.min.js')
  chart(@Res() res: ExpressResponse): void {
    send(res, this.assets.chart(), 'public, max-age=3600');
  }

  /** The page's own files, by a fixed list (no path parameter reaches the file system). */
  @Public()
  @Get(DASHBOARD_FILES.map((name) => `dashboard/${name}`))
  asset(@Req() req: ExpressRequest, @Res() res: ExpressResponse): void {
    const asset = this.assets.asset(req.path.slice('/dashboard/'.length));
    if (!asset) throw new ApiError('NOT_FOUND', 'no such dashboard file');
    send(res, asset, 'no-cache');
  }
}

function send(res: ExpressResponse, asset: DashboardAsset, cache: string): void {
  res.status(200);
  res.setHeader('Content-Type', asset.contentType);
  res.setHeader('Cache-Control', cache);
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.end(asset.body);
}
