// DOM helpers: every value is set as text (textContent), never parsed as HTML.

/** h('a', {href: '/x', class: 'c', 'data-field': 'f'}, 'text', child) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A proportion as a percentage with one decimal: 0.1666 -> "16.7%" (docs/dashboard.md). */
export const pct = (x) => (x === null || x === undefined || Number.isNaN(x) ? 'n/a' : `${(x * 100).toFixed(1)}%`);
/** A difference of proportions in percentage points, signed: -0.818 -> "-81.8 pp". */
export const pp = (x) => (x === null || x === undefined ? 'n/a' : `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)} pp`);
/** An interval of proportions: "4.7%–44.8%". */
export const interval = (lower, upper) => `${pct(lower)}–${pct(upper)}`;
/** An interval of differences: "-94.9 pp to -42.6 pp". */
export const ppInterval = (lower, upper) => `${pp(lower)} to ${pp(upper)}`;
export const num3 = (x) => (x === null || x === undefined ? 'n/a' : Number(x).toFixed(3));
export const frac = (passed, n) => `${passed}/${n}`;
export const when = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

const METHODS = {
  newcombe_paired_10: 'Newcombe paired method 10',
  newcombe_hybrid_score: 'Newcombe hybrid score',
};
export const methodName = (m) => METHODS[m] ?? m ?? 'n/a';

/** What differs between the baseline and the run (G4's ChangeReport: each as {baseline, run}). */
export function changesText(ch) {
  if (!ch) return 'unknown';
  if (!ch.anything_changed) return 'nothing (same suite version, judge and scorers)';
  const step = (label, c) => `${label} ${c.baseline ?? 'none'} → ${c.run ?? 'none'}`;
  const parts = [];
  if (ch.suite_version) parts.push(step('suite version', ch.suite_version));
  if (ch.judge_model) parts.push(step('judge model', ch.judge_model));
  if (ch.prompt_version) parts.push(step('judge prompt', ch.prompt_version));
  for (const s of ch.scorer_versions ?? []) parts.push(step(`scorer ${s.scorer}`, s));
  return parts.join('; ') || 'changed';
}

export function badge(value, field) {
  const v = value ?? 'none';
  return h('span', { class: `badge ${String(v).replace(/[^a-z_]/g, '')}`, 'data-field': field }, String(v).replace(/_/g, ' '));
}

/** A data table: columns [{label, num?, field?, cell: (row) => node|text}], rows; each row gets `data-key`. */
export function table({ caption, columns, rows, key, empty = 'Nothing to show.' }) {
  if (!rows.length) return h('p', { class: 'muted', 'data-empty': 'true' }, empty);
  return h(
    'table',
    {},
    caption ? h('caption', {}, caption) : null,
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : '' }, c.label)))),
    h(
      'tbody',
      {},
      rows.map((row) => h('tr', { 'data-key': key ? key(row) : undefined }, columns.map((c) => h('td', { class: c.num ? 'num' : '', 'data-field': c.field }, c.cell(row))))),
    ),
  );
}

/** A definition list of facts: [[label, value, field?], ...]. */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).flatMap(([label, value, field]) => [h('dt', {}, label), h('dd', { 'data-field': field }, value)]),
  );
}

export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

export const runLink = (id) => (id ? link(`/runs/${encodeURIComponent(id)}`, id) : 'none');

export function notice(text, kind = '') {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** Prev / next buttons for an offset-paged list. */
export function pager({ offset, limit, total, onPage, label }) {
  const last = Math.min(offset + limit, total);
  return h(
    'div',
    { class: 'pager', role: 'navigation', 'aria-label': `${label} pages` },
    h('button', { type: 'button', class: 'secondary', disabled: offset === 0, onclick: () => onPage(Math.max(0, offset - limit)) }, '← Previous'),
    h('span', { 'data-field': 'page-range' }, total === 0 ? '0 of 0' : `${offset + 1}–${last} of ${total}`),
    h('button', { type: 'button', class: 'secondary', disabled: last >= total, onclick: () => onPage(offset + limit) }, 'Next →'),
  );
}
