/** What the dashboard needs of the read model's configuration (docs/dashboard.md). */
export interface DashboardSettings {
  /** EVALS_PUBLIC_URL; empty: links are relative to wherever the page was opened. */
  readonly publicUrl: string;
  /** Four-app deployment: where gate requests go (DASHBOARD_INGESTION_URL); empty: this origin serves them. */
  readonly ingestionUrl: string;
  /** Where finding and judge requests go (DASHBOARD_REGRESSION_URL); empty: this origin serves them. */
  readonly regressionUrl: string;
}

export const DASHBOARD_SETTINGS = Symbol('DASHBOARD_SETTINGS');

/** The path prefix under which the read model forwards a request to another app. */
export const UPSTREAM_PREFIX = '/dashboard/upstream';

/** What the browser is told (public: it holds paths, never an address or a secret). */
export function browserConfig(settings: DashboardSettings): { ingestion_base: string; regression_base: string; public_url: string } {
  return {
    ingestion_base: settings.ingestionUrl ? `${UPSTREAM_PREFIX}/ingestion` : '',
    regression_base: settings.regressionUrl ? `${UPSTREAM_PREFIX}/regression` : '',
    public_url: settings.publicUrl.replace(/\/+$/, ''),
  };
}
