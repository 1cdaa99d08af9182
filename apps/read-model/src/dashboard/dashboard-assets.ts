import * as fs from 'node:fs';
import * as path from 'node:path';

/** What the dashboard serves: its own files (plain ES modules, no build step) and the pinned chart library. */
export interface DashboardAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The page's files (assets/), each served at /dashboard/<name>. */
export const DASHBOARD_FILES = ['app.js', 'api.js', 'views.js', 'charts.js', 'dom.js', 'style.css'] as const;

/**
 * The dashboard's files, read once from disk (docs/dashboard.md): beside this file when run from the sources,
 * and in dist/ after `npm run build` (scripts/copy-dashboard-assets.js copies them there). The chart library
 * is Chart.js's UMD build from node_modules (pinned exact in package.json), so nothing is fetched from a CDN.
 */
export class DashboardAssets {
  private readonly cache = new Map<string, DashboardAsset>();

  constructor(
    private readonly dir = path.join(__dirname, 'assets'),
    private readonly chartFile = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'),
  ) {}

  /** The shell page every dashboard URL answers with (its router reads the path). */
  shell(): DashboardAsset {
    const page = this.load('index.html');
    if (!page) throw new Error(`the dashboard's index.html is missing from ${this.dir} (npm run build copies it)`);
    return page;
  }

  asset(name: string): DashboardAsset | null {
    if (!(DASHBOARD_FILES as readonly string[]).includes(name)) return null;
    return this.load(name);
  }

  chart(): DashboardAsset {
    const hit = this.cache.get('vendor:chart');
    if (hit) return hit;
    const asset = { body: fs.readFileSync(this.chartFile), contentType: TYPES['.js']! };
    this.cache.set('vendor:chart', asset);
    return asset;
  }

  private load(name: string): DashboardAsset | null {
    const hit = this.cache.get(name);
    if (hit) return hit;
    const file = path.join(this.dir, name);
    if (!fs.existsSync(file)) return null;
    const asset = { body: fs.readFileSync(file), contentType: TYPES[path.extname(name)] ?? 'application/octet-stream' };
    this.cache.set(name, asset);
    return asset;
  }
}
