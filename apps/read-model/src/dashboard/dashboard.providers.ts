import type { Provider } from '@nestjs/common';
import { DashboardQueries } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import type { ReadModelConfig } from '../config';
import { DashboardApiController, DASHBOARD_QUERIES } from './dashboard-api.controller';
import { DashboardUpstreamController } from './dashboard-upstream.controller';
import { DashboardController } from './dashboard.controller';
import { DASHBOARD_SETTINGS, type DashboardSettings } from './dashboard.settings';

/** The dashboard's routes (issue 17): the shell, its list views, and the forwarder of the four-app layout. */
export const DASHBOARD_CONTROLLERS = [DashboardController, DashboardApiController, DashboardUpstreamController];

export function dashboardProviders(config: ReadModelConfig): Provider[] {
  const settings: DashboardSettings = { publicUrl: config.publicUrl, ingestionUrl: config.dashboardIngestionUrl, regressionUrl: config.dashboardRegressionUrl };
  return [
    { provide: DASHBOARD_SETTINGS, useValue: settings },
    { provide: DASHBOARD_QUERIES, useFactory: (ds: DataSource) => new DashboardQueries(ds), inject: [DATA_SOURCE] },
  ];
}
