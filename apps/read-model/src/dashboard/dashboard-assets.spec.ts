import * as fs from 'node:fs';
import * as path from 'node:path';
import { DASHBOARD_FILES, DashboardAssets } from './dashboard-assets';
import { browserConfig } from './dashboard.settings';

describe('unit: the dashboard shell and its files (UI1, docs/dashboard.md)', () => {
  const assets = new DashboardAssets();

  it('serves the fixed list of its own files and nothing else (no path reaches the file system)', () => {
    for (const name of DASHBOARD_FILES) expect(assets.asset(name)?.body.length).toBeGreaterThan(0);
    for (const name of ['../config.ts', 'index.html', '.env', 'app.js/../../x', 'dashboard.controller.ts']) expect(assets.asset(name)).toBeNull();
    expect(assets.shell().contentType).toBe('text/html; charset=utf-8');
  });

  it('every file the assets folder holds is in the list, and the shell loads only same-origin scripts', () => {
    const folder = fs.readdirSync(path.join(__dirname, 'assets')).filter((f) => f !== 'index.html').sort();
    expect(folder).toEqual([...DASHBOARD_FILES].sort());
    const html = assets.shell().body.toString('utf8');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.every((s) => s!.startsWith('#') || (s!.startsWith('/') && !s!.startsWith('//')))).toBe(true);
    expect(html).not.toMatch(/<script>|\son[a-z]+="/); // no inline script or handler (the CSP forbids them)
  });

  it('serves the pinned Chart.js from node_modules (no CDN)', () => {
    const chart = assets.chart().body.toString('utf8', 0, 400);
    const pinned = (JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['chart.js'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/); // exact
    expect(chart).toContain(`Chart.js v${pinned}`);
  });

  it('tells the browser paths, never an address: same origin unless the read model forwards', () => {
    expect(browserConfig({ publicUrl: '', ingestionUrl: '', regressionUrl: '' })).toEqual({ ingestion_base: '', regression_base: '', public_url: '' });
    expect(browserConfig({ publicUrl: 'https://evals.example.com/', ingestionUrl: 'http://ingestion:3001', regressionUrl: 'http://regression:3004' })).toEqual({
      ingestion_base: '/dashboard/upstream/ingestion',
      regression_base: '/dashboard/upstream/regression',
      public_url: 'https://evals.example.com',
    });
  });
});
