// The dashboard's only way to data: the service's HTTP API, with the viewer's key when one is set.

const KEY = 'evals.apiKey';
const PROJECT = 'evals.project';
let config = { ingestion_base: '', regression_base: '', public_url: '' };

export class AuthNeeded extends Error {}
export class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

export async function loadConfig() {
  const res = await fetch('/dashboard/config.json', { headers: { accept: 'application/json' } });
  if (res.ok) config = await res.json();
  return config;
}

/**
 * The address of a dashboard page to paste elsewhere - a CI summary, a ticket, a chat (docs/dashboard.md):
 * under EVALS_PUBLIC_URL when the server has one, because the address this tab reached (a tunnel, a port
 * forward, the loopback) may not be one anybody else can open; else this tab's own origin.
 */
export function shareUrl(path) {
  return `${config.public_url || location.origin}${path}`;
}

// The key lives for this tab only (sessionStorage), never in a URL.
export const getKey = () => sessionStorage.getItem(KEY);
export const setKey = (key) => sessionStorage.setItem(KEY, key.trim());
export const forgetKey = () => (sessionStorage.removeItem(KEY), sessionStorage.removeItem(PROJECT));

// Issue 30: the project a platform key acts in (sent as X-Evals-Project); none: the key's own, or `default`.
export const getProject = () => sessionStorage.getItem(PROJECT);
export const setProject = (project) => (project.trim() ? sessionStorage.setItem(PROJECT, project.trim()) : sessionStorage.removeItem(PROJECT));

/** Which app serves a path: the read model here; gates, findings and judges maybe through the forwarder. */
export function url(app, path) {
  const base = app === 'ingestion' ? config.ingestion_base : app === 'regression' ? config.regression_base : '';
  return `${base}${path}`;
}

function headers(extra = {}) {
  const key = getKey();
  const project = getProject();
  return { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...(project ? { 'x-evals-project': project } : {}), ...extra };
}

export async function api(app, path, { method = 'GET', body, allow404 = false } = {}) {
  const res = await fetch(url(app, path), {
    method,
    headers: headers(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 401) throw new AuthNeeded();
  if (allow404 && res.status === 404) return null;
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiFailure(res.status, data?.code, data?.message);
  return data;
}

/** The run's SSE replay (GET /v1/runs/:id/events, R6) as frames: [{event, data}], the summary last. */
export async function runFrames(runId) {
  const res = await fetch(url('read', `/v1/runs/${encodeURIComponent(runId)}/events`), { headers: headers({ accept: 'text/event-stream' }) });
  if (res.status === 401) throw new AuthNeeded();
  if (!res.ok) throw new ApiFailure(res.status, 'SSE', `the run's event stream answered ${res.status}`);
  const text = await res.text();
  const frames = [];
  for (const block of text.split('\n\n')) {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) frames.push({ event, data: JSON.parse(data.join('\n')) });
  }
  return frames;
}

/** An export link that also works with a key: the click downloads through fetch with the header. */
export async function download(href, filename) {
  const res = await fetch(href, { headers: headers({ accept: '*/*' }) });
  if (res.status === 401) throw new AuthNeeded();
  if (!res.ok) throw new ApiFailure(res.status, 'EXPORT', `the export answered ${res.status}`);
  const blob = await res.blob();
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
