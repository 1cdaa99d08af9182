// The dashboard's entry: a router over pasteable paths (/runs/<id>, /scorecards?suite_key=...), the viewer's
// key when the service asks for one, and keyboard-friendly navigation (focus moves to the page's content).
import { api, ApiFailure, AuthNeeded, forgetKey, getKey, getProject, loadConfig, setKey, setProject } from './api.js';
import { resetCharts } from './charts.js';
import { clear, h, notice } from './dom.js';
import { findingsPage, gatePage, gatesPage, judgesPage, runPage, runsPage, scorecardsPage, setNavigator } from './views.js';

const main = document.getElementById('main');
const whoBox = document.getElementById('who');
let who = null;
let current = null;

const ROUTES = [
  [/^\/(runs\/?)?$/, 'runs', () => runsPage(main), 'Runs'],
  [/^\/runs\/([^/]+)$/, 'runs', (m, signal) => runPage(main, decodeURIComponent(m[1]), signal), (m) => `Run ${decodeURIComponent(m[1])}`],
  [/^\/scorecards\/?$/, 'scorecards', () => scorecardsPage(main), 'Scorecards'],
  [/^\/findings\/?$/, 'findings', () => findingsPage(main), 'Findings'],
  [/^\/gates\/?$/, 'gates', () => gatesPage(main), 'Gates'],
  [/^\/gates\/([^/]+)$/, 'gates', (m, signal) => gatePage(main, decodeURIComponent(m[1]), signal, who), (m) => `Gate ${decodeURIComponent(m[1])}`],
  [/^\/judges\/?$/, 'judges', () => judgesPage(main), 'Judges'],
];

async function render({ focus = false } = {}) {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  resetCharts();
  const route = ROUTES.map(([re, nav, page, title]) => ({ m: re.exec(location.pathname), nav, page, title })).find((r) => r.m);
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (route && a.dataset.nav === route.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!route) {
    clear(main, h('h1', {}, 'Not found'), h('p', {}, 'No dashboard page at this address.'));
    return;
  }
  document.title = `${typeof route.title === 'function' ? route.title(route.m) : route.title} · evals`;
  main.setAttribute('aria-busy', 'true');
  try {
    if (!who) who = await api('read', '/v1/whoami');
    showWho();
    await route.page(route.m, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) return;
    if (error instanceof AuthNeeded) keyForm(getKey() ? 'That key was refused (unknown or revoked).' : '');
    // The guard's answer to a project the key may not use (or that does not exist): ask again.
    else if (!who && error instanceof ApiFailure && error.code === 'PROJECT_NOT_FOUND') keyForm(`No project ${getProject() ?? ''} for this key.`);
    else clear(main, h('h1', {}, 'Could not load this page'), notice(`${error.code ? `${error.code}: ` : ''}${error.message}`, 'error'));
  } finally {
    if (current === controller) {
      main.setAttribute('aria-busy', 'false');
      main.dataset.ready = location.pathname + location.search;
    }
  }
  if (focus) main.focus();
}

function showWho() {
  clear(
    whoBox,
    // Issue 30: every page shows one project's data only; say which (a project key's own, or a platform key's choice).
    `${who.auth_disabled ? 'access control off (loopback)' : `${who.name} · ${who.tier}`}${who.project ? ` · project ${who.project}` : ''}`,
    getKey() ? h('button', { type: 'button', class: 'secondary', onclick: () => (forgetKey(), (who = null), render()) }, 'Forget key') : null,
  );
  whoBox.dataset.tier = who.tier;
}

function keyForm(problem) {
  who = null;
  clear(whoBox);
  const input = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', required: true, size: 50 });
  const project = h('input', { id: 'api-project', type: 'text', autocomplete: 'off', size: 30, pattern: '[a-z0-9][a-z0-9-]{0,62}', value: getProject() ?? '' });
  clear(
    main,
    h('h1', {}, 'API key needed'),
    h('p', {}, 'This service requires an API key of the viewer tier or above (docs/security.md). It is kept in this tab only.'),
    problem ? notice(problem, 'error') : null,
    h(
      'form',
      { 'data-form': 'key', onsubmit: (e) => (e.preventDefault(), setKey(input.value), setProject(project.value), render({ focus: true })) },
      h('label', { for: 'api-key' }, 'API key', input),
      h('label', { for: 'api-project' }, 'Project (a platform key only; empty: the key\'s own)', project),
      h('p', {}, h('button', { type: 'submit' }, 'Open the dashboard')),
    ),
  );
  main.setAttribute('aria-busy', 'false');
  main.dataset.ready = 'key';
  input.focus();
}

function navigate(href) {
  history.pushState(null, '', href);
  render({ focus: true });
}
setNavigator(navigate);

// Same-origin page links are routed here; export links (data-external) and modified clicks are left alone.
document.addEventListener('click', (e) => {
  const a = e.target instanceof Element ? e.target.closest('a[href]') : null;
  if (!a || a.dataset.external || a.target || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const target = new URL(a.href, location.href);
  if (target.origin !== location.origin || target.pathname.startsWith('/v1/') || target.pathname.startsWith('/dashboard/')) return;
  e.preventDefault();
  navigate(target.pathname + target.search);
});
window.addEventListener('popstate', () => render({ focus: true }));

loadConfig().then(() => render());
