import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// Evaluated in the page, not in Node (this project compiles without the DOM library).
declare const document: any;
declare const window: any;

/**
 * Headless Chromium for the dashboard's browser tests (docs/dashboard.md): Debian's `chromium` package at its
 * executable path (no browser download), driven by playwright-core, with a fresh profile per launch and
 * everything that would reach the network on its own switched off.
 */
export const CHROMIUM_PATH = process.env.EVALS_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Why the browser tests cannot run here, or null when they can. */
export function browserUnavailable(): string | null {
  return fs.existsSync(CHROMIUM_PATH) ? null : `no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium; .ci/run installs it)`;
}

export interface Browser {
  readonly context: BrowserContext;
  /** A new tab: its own sessionStorage, so its own API key. Console errors and page errors are collected. */
  page(): Promise<Page>;
  readonly errors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  // A fresh --user-data-dir per launch (playwright passes it for a persistent context).
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    offline: false,
  });
  const errors: string[] = [];
  return {
    context,
    errors,
    async page() {
      const page = await context.newPage();
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && !/favicon/.test(m.location().url)) errors.push(`console: ${m.text()} (${m.location().url})`);
      });
      return page;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens a dashboard URL and waits until the page says it has rendered it (main[data-ready]). */
export async function openPage(page: Page, url: string, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  await page.goto(url);
  await waitReady(page, timeoutMs);
  return Date.now() - started;
}

export async function waitReady(page: Page, timeoutMs = 20_000): Promise<void> {
  await page.waitForFunction(() => document.querySelector('main')?.getAttribute('aria-busy') === 'false' && Boolean(document.querySelector('main')?.dataset.ready), null, { timeout: timeoutMs });
}

/** The text of `[data-field=field]` inside `scope` (a CSS selector), trimmed. */
export async function fieldText(page: Page, field: string, scope = 'main'): Promise<string> {
  return (await page.locator(`${scope} [data-field="${field}"]`).first().innerText()).trim();
}

/** Where the screenshots go (gitignored): test/artifacts/dashboard/. */
export const ARTIFACTS = path.resolve(__dirname, '..', 'artifacts', 'dashboard');

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
