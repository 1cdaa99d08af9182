/**
 * Loads the `pg` driver before TypeORM does. Why: on Node 20, which has no global `navigator`, pg tells a
 * Cloudflare Worker from Node while it loads by constructing a web `Response` - and the first touch of
 * `Response` loads Node's whole fetch implementation (undici): 15-50 ms of CPU at every start of every app and
 * CLI command (issue 15). A `navigator` that says Node.js, there only while pg loads, gives pg the same answer
 * without it. Node 21 and later have a `navigator` of their own, which is left alone.
 */
export function loadPgDriver(): void {
  if ('navigator' in globalThis) {
    require('pg');
    return;
  }
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent: `Node.js/${process.version.slice(1)}` }, configurable: true });
  try {
    require('pg');
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}
