// The pages. Each one reads the API and renders text; charts repeat what the text says.
import { api, download, runFrames, shareUrl, url } from './api.js';
import { agreementChart, differenceChart, trendChart } from './charts.js';
import { badge, changesText, clear, facts, frac, h, interval, link, methodName, num3, pager, pct, pp, ppInterval, runLink, table, when } from './dom.js';

const PAGE = 50;
const CASE_PAGE = 50;
const LIVE_POLL_MS = 1000;

/** The navigation a page can ask for (app.js supplies it): push a URL and render it. */
let go = () => undefined;
export function setNavigator(fn) {
  go = fn;
}

const params = () => new URLSearchParams(location.search);
function withParams(path, values) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** A page's pasteable address (EVALS_PUBLIC_URL when set): the navigation links stay relative to this tab. */
function shareLink(path) {
  const href = shareUrl(path);
  return h('a', { href }, href);
}

function filterForm(fields, values, onSubmit) {
  const inputs = {};
  const form = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: (e) => (e.preventDefault(), onSubmit(Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, el.value.trim()])))) },
    fields.map((f) => {
      const control = f.options
        ? h('select', { name: f.name }, f.options.map((o) => h('option', { value: o, selected: values[f.name] === o }, o || 'any')))
        : h('input', { name: f.name, value: values[f.name] ?? '', size: 14, autocomplete: 'off' });
      inputs[f.name] = control;
      return h('label', {}, f.label, control);
    }),
    h('button', { type: 'submit' }, 'Apply'),
  );
  return form;
}

// ------------------------------------------------------------------------------------------------ runs

const VERDICTS = ['', 'regressed', 'inconclusive_noise', 'no_regression', 'no_baseline', 'undecided'];
const RUN_FILTERS = ['suite_key', 'subject_kind', 'subject_id', 'variant', 'verdict', 'status'];

export async function runsPage(main) {
  const p = params();
  const values = Object.fromEntries(RUN_FILTERS.map((k) => [k, p.get(k) ?? '']));
  const offset = Number(p.get('offset') ?? 0) || 0;
  const page = await api('read', withParams('/v1/run-list', { ...values, offset, limit: PAGE }));
  const gates = await gatesFor(page.items.map((r) => r.run_id));
  clear(
    main,
    h('h1', {}, 'Runs'),
    filterForm(
      [
        { name: 'suite_key', label: 'Suite' },
        { name: 'subject_kind', label: 'Subject kind' },
        { name: 'subject_id', label: 'Subject' },
        { name: 'variant', label: 'Variant' },
        { name: 'verdict', label: 'Verdict', options: VERDICTS },
        { name: 'status', label: 'Status', options: ['', 'open', 'sealed', 'completed'] },
      ],
      values,
      (v) => go(withParams('/', v)),
    ),
    table({
      caption: 'Newest first. Pass rate with its denominator and 95% Wilson interval (GT6).',
      key: (r) => r.run_id,
      empty: 'No run matches.',
      rows: page.items,
      columns: [
        { label: 'Run', field: 'run_id', cell: (r) => runLink(r.run_id) },
        { label: 'Suite', field: 'suite', cell: (r) => `${r.suite_key} v${r.suite_version}` },
        { label: 'Subject', field: 'subject', cell: (r) => `${r.subject_kind}/${r.subject_id}` },
        { label: 'Variant', field: 'variant', cell: (r) => r.variant ?? '' },
        { label: 'Status', field: 'status', cell: (r) => badge(r.status) },
        { label: 'Pass rate', num: true, field: 'pass_rate', cell: (r) => pct(r.summary.pass_rate) },
        { label: 'Passed / n', num: true, field: 'passed_n', cell: (r) => frac(r.summary.passed, r.summary.n) },
        { label: '95% interval', num: true, field: 'ci', cell: (r) => interval(r.summary.pass_rate_ci.lower, r.summary.pass_rate_ci.upper) },
        { label: 'Verdict', field: 'verdict', cell: (r) => badge(r.verdict ?? 'undecided') },
        { label: 'Gate', field: 'gate', cell: (r) => gateCell(gates, r.run_id) },
      ],
    }),
    pager({ offset, limit: PAGE, total: page.total, label: 'Runs', onPage: (o) => go(withParams('/', { ...values, offset: o })) }),
  );
}

/** The latest gate of each run (GET /v1/gates?run_id=...), for the runs list's gate column. */
async function gatesFor(runIds) {
  const out = new Map();
  if (!runIds.length) return out;
  try {
    const page = await api('ingestion', withParams('/v1/gates', { run_id: runIds.join(','), limit: 500 }));
    for (const g of page.items) if (!out.has(g.run_id)) out.set(g.run_id, g);
  } catch {
    // The runs are still shown; the gate column says it could not be read rather than "not gated".
    return null;
  }
  return out;
}

function gateCell(gates, runId) {
  if (gates === null) return h('span', { class: 'muted' }, 'unknown (gates unavailable)');
  const gate = gates.get(runId);
  if (!gate) return h('span', { class: 'muted' }, 'not gated');
  return h(
    'span',
    {},
    h('a', { href: `/gates/${gate.gate_id}`, 'aria-label': `gate ${gate.effective_verdict}, ${gate.gate_id}` }, badge(gate.effective_verdict)),
    gate.effective_verdict !== gate.recorded_verdict ? h('span', { class: 'muted' }, ' (overridden)') : null,
  );
}

// ------------------------------------------------------------------------------------------------ one run

export async function runPage(main, runId, signal) {
  const view = await api('read', `/v1/runs/${encodeURIComponent(runId)}`);
  const run = view.run;
  const summaryBox = h('section', { 'aria-labelledby': 'summary-h' });
  const comparisonBox = h('section', { 'aria-labelledby': 'comparison-h' });
  const findingBox = h('section', { 'aria-labelledby': 'finding-h' });
  const gateBox = h('section', { 'aria-labelledby': 'gate-h' });
  const casesBox = h('section', { 'aria-labelledby': 'cases-h' });
  const liveBox = h('p', { 'aria-live': 'polite', 'data-field': 'live' });
  clear(
    main,
    h('h1', {}, `Run ${run.run_id}`),
    facts([
      ['Suite', `${run.suite_key} v${run.suite_version}`, 'suite'],
      ['Subject', `${run.subject_kind}/${run.subject_id}`, 'subject'],
      ['Variant', run.variant ?? 'none', 'variant'],
      ['Source', run.source ?? '', 'source'],
      ['Opened', when(run.opened_at), 'opened_at'],
      ['Link', shareLink(`/runs/${encodeURIComponent(run.run_id)}`), 'share_url'],
    ]),
    liveBox,
    summaryBox,
    comparisonBox,
    findingBox,
    gateBox,
    casesBox,
  );

  const cases = caseTable(casesBox, runId);
  if (run.status !== 'completed') {
    // Live: the SSE replay of the persisted run (R6), polled until the run completes.
    let frames = await runFrames(runId);
    let summary = frames[frames.length - 1]?.data;
    while (summary && summary.status !== 'completed' && !signal.aborted) {
      renderLive(liveBox, summaryBox, summary);
      cases.showFrames(frames.filter((f) => f.event === 'case').map((f) => f.data));
      await new Promise((r) => setTimeout(r, LIVE_POLL_MS));
      if (signal.aborted) return;
      frames = await runFrames(runId);
      summary = frames[frames.length - 1]?.data;
    }
    if (signal.aborted) return;
    return runPage(main, runId, signal);
  }
  clear(liveBox);
  renderSummary(summaryBox, run, view.eval_result);
  renderComparison(comparisonBox, view.regression, run);
  await cases.showPage(0);
  await Promise.all([renderFinding(findingBox, runId), renderRunGates(gateBox, runId)]);
}

function renderLive(liveBox, summaryBox, s) {
  clear(liveBox, h('span', { class: 'live' }, `● live: ${s.status}`), ` - ${s.frames} of ${s.case_count} cases scored`);
  clear(
    summaryBox,
    h('h2', { id: 'summary-h' }, 'Summary so far'),
    facts([
      ['Status', badge(s.status), 'status'],
      ['Scored', `${s.frames} of ${s.case_count}`, 'scored'],
      ['Pass rate', pct(s.pass_rate), 'pass_rate'],
      ['Passed / n', frac(s.passed, s.n), 'passed_n'],
      ['95% interval', interval(s.pass_rate_ci.lower, s.pass_rate_ci.upper), 'ci'],
    ]),
  );
}

function renderSummary(box, run, result) {
  const s = run.summary;
  clear(
    box,
    h('h2', { id: 'summary-h' }, 'Summary'),
    facts([
      ['Status', badge(run.status), 'status'],
      ['Pass rate', pct(s.pass_rate), 'pass_rate'],
      ['Passed / n', frac(s.passed, s.n), 'passed_n'],
      ['95% interval', interval(s.pass_rate_ci.lower, s.pass_rate_ci.upper), 'ci'],
      ['Mean score', num3(s.score), 'score'],
      ['Pass threshold', pct(run.pass_threshold), 'pass_threshold'],
      ['Run passed (R2)', s.run_passed === null ? 'n/a' : badge(s.run_passed ? 'pass' : 'fail', 'run_passed'), 'run_passed_cell'],
      ['Cases', `${run.case_count} in the suite, ${run.missing_outputs} without an output`, 'case_count'],
      ['Completed', when(run.completed_at), 'completed_at'],
      result ? ['EvalResult', result.passed ? 'passed' : 'failed', 'eval_result'] : null,
    ]),
  );
}

function renderComparison(box, regression, run) {
  clear(box, h('h2', { id: 'comparison-h' }, 'Comparison with the baseline'));
  if (!regression) {
    box.append(h('p', { class: 'muted', 'data-field': 'comparison' }, 'Not compared yet.'));
    return;
  }
  const c = regression.comparison ?? {};
  const deciding = c.decided_by === 'paired' && c.paired_diff ? c.paired_diff : c.pass_rate_diff;
  box.append(
    facts([
      ['Verdict', badge(regression.verdict, 'verdict'), 'verdict_cell'],
      ['Baseline', runLink(regression.baseline_run_id), 'baseline'],
      ['Chosen by', regression.chosen_by ?? 'none', 'chosen_by'],
      c.run && c.baseline ? ['Run / baseline', `run ${frac(c.run.passed, c.run.n)} vs baseline ${frac(c.baseline.passed, c.baseline.n)}`, 'denominators'] : null,
      deciding ? ['Difference', `${pp(deciding.diff)} (95% CI ${ppInterval(deciding.lower, deciding.upper)})`, 'difference'] : null,
      deciding ? ['Method that decided', methodName(deciding.method), 'method'] : null,
      c.score_drop !== undefined ? ['Score drop / threshold', `${num3(c.score_drop)} / ${num3(c.regression_threshold ?? run.regression_threshold)}`, 'score_drop'] : null,
      c.compared_cases ? ['Compared cases', comparedText(c.compared_cases), 'compared_cases'] : null,
      ['What changed', changesText(c.changes), 'changes'],
      ['Completeness', regression.completeness, 'completeness'],
      ['Next automatic baseline?', regression.baseline_eligible ? 'eligible' : `not eligible (${regression.baseline_ineligible_reason ?? ''})`, 'baseline_eligible'],
      c.error ? ['Error', String(c.error?.message ?? c.error), 'comparison_error'] : null,
    ]),
  );
  if (deciding) {
    const canvas = h('canvas', {
      role: 'img',
      'aria-label': `Pass-rate difference ${pp(deciding.diff)}, 95% interval ${ppInterval(deciding.lower, deciding.upper)}, against zero; score drop ${num3(c.score_drop)}, threshold ${num3(c.regression_threshold)}`,
    });
    box.append(h('div', { class: 'chart small', 'data-chart': 'difference' }, canvas));
    differenceChart(canvas, { ...deciding, scoreDrop: c.score_drop, threshold: c.regression_threshold ?? run.regression_threshold, method: methodName(deciding.method) });
  }
}

function comparedText(cc) {
  const left = cc.left_out ?? {};
  return `run ${cc.run?.n} of ${cc.run?.of}, baseline ${cc.baseline?.n} of ${cc.baseline?.of}; left out: ${left.unscored_in_run ?? 0} unscored in the run, ${left.unscored_in_baseline ?? 0} in the baseline`;
}

async function renderFinding(box, runId) {
  const finding = await api('regression', `/v1/findings/${encodeURIComponent(runId)}`, { allow404: true }).catch(() => null);
  clear(box, h('h2', { id: 'finding-h' }, 'Finding'));
  if (!finding) {
    box.append(h('p', { class: 'muted', 'data-field': 'finding' }, 'No finding: the run did not regress (or is not compared yet).'));
    return;
  }
  box.append(findingFacts(finding));
}

function findingFacts(f) {
  const d = f.pass_rate_diff ?? {};
  return facts([
    ['Finding', f.finding_id, 'finding_id'],
    ['Kind', f.kind, 'kind'],
    ['Against', runLink(f.baseline_run_id), 'finding_baseline'],
    ['Score drop', num3(f.score_drop), 'finding_score_drop'],
    ['Difference', `${pp(d.diff)} (95% CI ${ppInterval(d.lower, d.upper)}), ${methodName(d.method)}`, 'finding_difference'],
    ['Run / baseline', `run ${frac(f.run?.passed, f.run?.n)} vs baseline ${frac(f.baseline?.passed, f.baseline?.n)}`, 'finding_denominators'],
    ['Reported', when(f.occurred_at), 'finding_at'],
  ]);
}

async function renderRunGates(box, runId) {
  const page = await api('ingestion', withParams('/v1/gates', { run_id: runId, limit: 20 })).catch(() => null);
  clear(box, h('h2', { id: 'gate-h' }, 'Gate'));
  if (!page || !page.items.length) {
    box.append(h('p', { class: 'muted', 'data-field': 'gate' }, 'This run was not gated.'));
    return;
  }
  box.append(gatesTable(page.items));
}

/** The per-case table: labels and scores, never an output (D1); a page at a time. */
function caseTable(box, runId) {
  let filter = '';
  let frames = null;
  const body = h('div');
  const select = h(
    'select',
    { name: 'passed', onchange: () => ((filter = select.value), frames ? showFrames(frames) : showPage(0)) },
    h('option', { value: '' }, 'all'),
    h('option', { value: 'false' }, 'failed'),
    h('option', { value: 'true' }, 'passed'),
  );
  clear(box, h('h2', { id: 'cases-h' }, 'Cases'), h('form', { class: 'filters', onsubmit: (e) => e.preventDefault() }, h('label', {}, 'Show', select)), body);
  const render = (page, onPage) =>
    clear(
      body,
      table({
        caption: 'By case id. Labels only: the output text is never stored or shown (D1).',
        key: (c) => c.case_id,
        rows: page.items,
        empty: 'No case scored yet.',
        columns: [
          { label: 'Case', field: 'case_id', cell: (c) => c.case_id },
          { label: 'Scorer', field: 'scorer', cell: (c) => c.scorer },
          { label: 'Passed', field: 'passed', cell: (c) => badge(c.passed ? 'pass' : 'fail') },
          { label: 'Score', num: true, field: 'score', cell: (c) => num3(c.score) },
          { label: 'Label', field: 'label', cell: (c) => c.label },
        ],
      }),
      pager({ offset: page.offset, limit: page.limit, total: page.total, label: 'Cases', onPage }),
    );
  let shownOffset = 0;
  async function showPage(offset) {
    frames = null;
    const page = await api('read', withParams(`/v1/runs/${encodeURIComponent(runId)}/cases`, { passed: filter, offset, limit: CASE_PAGE }));
    render(page, showPage);
  }
  function showFrames(all, offset = shownOffset) {
    frames = all;
    shownOffset = offset;
    const rows = filter === '' ? all : all.filter((c) => String(c.passed) === filter);
    render({ items: rows.slice(offset, offset + CASE_PAGE), total: rows.length, offset, limit: CASE_PAGE }, (o) => showFrames(frames, o));
  }
  return { showPage, showFrames };
}

// ------------------------------------------------------------------------------------------------ scorecards

export async function scorecardsPage(main) {
  const p = params();
  const values = { suite_key: p.get('suite_key') ?? '', subject_kind: p.get('subject_kind') ?? '', subject_id: p.get('subject_id') ?? '' };
  const data = await api('read', withParams('/v1/scorecards', values));
  const exportLink = (format) => {
    const href = url('read', withParams('/v1/scorecards', { ...values, format }));
    return h('a', { href, 'data-external': 'true', 'data-field': `export_${format}`, onclick: (e) => (e.preventDefault(), download(href, `scorecards.${format}`)) }, `Export ${format.toUpperCase()}`);
  };
  const cards = h('div', { class: 'cards' });
  clear(
    main,
    h('h1', {}, 'Scorecards'),
    filterForm(
      [
        { name: 'suite_key', label: 'Suite' },
        { name: 'subject_kind', label: 'Subject kind' },
        { name: 'subject_id', label: 'Subject' },
      ],
      values,
      (v) => go(withParams('/scorecards', v)),
    ),
    h('p', {}, exportLink('csv'), ' · ', exportLink('json'), ' · Link: ', h('span', { 'data-field': 'share_url' }, shareLink(withParams('/scorecards', values)))),
    data.scorecards.length ? cards : h('p', { class: 'muted', 'data-empty': 'true' }, 'No decided run yet: a scorecard needs a run the regression app has compared.'),
  );
  for (const card of data.scorecards) {
    const canvas = h('canvas', { role: 'img', 'aria-label': `Pass rate per run of ${card.suite_key} for ${card.subject_kind}/${card.subject_id}, with 95% bands and the trend line` });
    const key = `${card.suite_key}|${card.subject_kind}|${card.subject_id}`;
    cards.append(
      h(
        'section',
        { class: 'card', 'data-key': key, 'aria-label': `${card.suite_key} ${card.subject_kind}/${card.subject_id}` },
        h('h2', {}, `${card.suite_key} · ${card.subject_kind}/${card.subject_id}`),
        facts([
          ['Runs', `${card.runs} (${card.runs_incomplete} incomplete, left out of the pooled rate and trend)`, 'runs'],
          ['Latest run', runLink(card.latest_run_id), 'latest_run'],
          ['Latest pass rate', `${pct(card.latest_pass_rate.rate)} (${frac(card.latest_pass_rate.passed, card.latest_pass_rate.n)}, 95% CI ${interval(card.latest_pass_rate.lower, card.latest_pass_rate.upper)})`, 'latest_pass_rate'],
          ['Overall pass rate', `${pct(card.overall_pass_rate.rate)} (${frac(card.overall_pass_rate.passed, card.overall_pass_rate.n)}, 95% CI ${interval(card.overall_pass_rate.lower, card.overall_pass_rate.upper)})`, 'overall_pass_rate'],
          ['Mean score', num3(card.mean_score), 'mean_score'],
          ['Trend', `${card.trend.direction.replace(/_/g, ' ')}${card.trend.slope_per_run === null ? '' : `, ${pp(card.trend.slope_per_run)} per run`} over ${card.trend.runs} runs`, 'trend'],
          ['Latest verdict', badge(card.latest_verdict, 'latest_verdict'), 'latest_verdict_cell'],
        ]),
        h('div', { class: 'chart', 'data-chart': 'trend' }, canvas),
      ),
    );
    const runs = await api('read', withParams('/v1/run-list', { suite_key: card.suite_key, subject_kind: card.subject_kind, subject_id: card.subject_id, status: 'completed', limit: 200 }));
    trendChart(canvas, runs.items.filter((r) => r.verdict !== null).reverse(), card.trend);
  }
}

// ------------------------------------------------------------------------------------------------ findings

export async function findingsPage(main) {
  const p = params();
  const values = { suite_key: p.get('suite_key') ?? '', subject_id: p.get('subject_id') ?? '' };
  const data = await api('regression', withParams('/v1/findings', { ...values, limit: 100 }));
  clear(
    main,
    h('h1', {}, 'Findings'),
    filterForm(
      [
        { name: 'suite_key', label: 'Suite' },
        { name: 'subject_id', label: 'Subject' },
      ],
      values,
      (v) => go(withParams('/findings', v)),
    ),
    table({
      caption: 'Regressions the regression app reported (G6), newest first; the difference is the interval that decided.',
      key: (f) => f.run_id,
      rows: data.findings,
      empty: 'No finding.',
      columns: [
        { label: 'Run', field: 'run_id', cell: (f) => runLink(f.run_id) },
        { label: 'Baseline', field: 'baseline', cell: (f) => runLink(f.baseline_run_id) },
        { label: 'Suite', field: 'suite', cell: (f) => `${f.suite} v${f.suite_version}` },
        { label: 'Subject', field: 'subject', cell: (f) => `${f.subject_kind}/${f.subject_id}` },
        { label: 'Score drop', num: true, field: 'score_drop', cell: (f) => num3(f.score_drop) },
        { label: 'Difference (95% CI)', num: true, field: 'difference', cell: (f) => `${pp(f.pass_rate_diff.diff)} (${ppInterval(f.pass_rate_diff.lower, f.pass_rate_diff.upper)})` },
        { label: 'Method', field: 'method', cell: (f) => methodName(f.pass_rate_diff.method) },
        { label: 'Run / baseline', field: 'denominators', cell: (f) => `${frac(f.run.passed, f.run.n)} vs ${frac(f.baseline.passed, f.baseline.n)}` },
        { label: 'Reported', field: 'at', cell: (f) => when(f.occurred_at) },
      ],
    }),
  );
}

// ------------------------------------------------------------------------------------------------ gates

function gatesTable(items) {
  return table({
    key: (g) => g.gate_id,
    rows: items,
    empty: 'No gate recorded.',
    columns: [
      { label: 'Gate', field: 'gate_id', cell: (g) => link(`/gates/${g.gate_id}`, g.gate_id.slice(0, 8), { 'aria-label': `gate ${g.gate_id}` }) },
      { label: 'Run', field: 'run_id', cell: (g) => runLink(g.run_id) },
      { label: 'Suite', field: 'suite', cell: (g) => (g.kind === 'family' ? 'family' : g.suite_key ?? '') },
      { label: 'Recorded', field: 'recorded_verdict', cell: (g) => badge(g.recorded_verdict) },
      { label: 'Effective', field: 'effective_verdict', cell: (g) => badge(g.effective_verdict) },
      { label: 'Reasons', field: 'reasons', cell: (g) => g.reasons.join(', ') || 'none' },
      { label: 'Warnings', field: 'warnings', cell: (g) => g.warnings.join(', ') || 'none' },
      { label: 'Overrides', num: true, field: 'overrides', cell: (g) => String(g.overrides) },
      { label: 'Recorded at', field: 'recorded_at', cell: (g) => when(g.recorded_at) },
    ],
  });
}

export async function gatesPage(main) {
  const offset = Number(params().get('offset') ?? 0) || 0;
  const page = await api('ingestion', withParams('/v1/gates', { offset, limit: PAGE }));
  clear(
    main,
    h('h1', {}, 'Gates'),
    h('p', { class: 'muted' }, 'Recorded verdicts are append-only; an override changes the effective verdict and is audited (GT5).'),
    gatesTable(page.items),
    pager({ offset, limit: PAGE, total: page.total, label: 'Gates', onPage: (o) => go(withParams('/gates', { offset: o })) }),
  );
}

export async function gatePage(main, gateId, _signal, who) {
  const g = await api('ingestion', `/v1/gate/${encodeURIComponent(gateId)}`);
  const overrides = g.overrides ?? [];
  const list = (items) => (items?.length ? h('ul', {}, items.map((r) => h('li', { 'data-code': r.code }, h('code', {}, r.code), `: ${r.message}`))) : h('p', { class: 'muted' }, 'none'));
  const formBox = h('section', { 'aria-labelledby': 'override-h' });
  clear(
    main,
    h('h1', {}, `Gate ${g.gate_id}`),
    facts([
      ['Run', runLink(g.run?.run_id), 'run'],
      g.kind === 'family' ? ['Kind', 'family of suites (GT7)', 'kind'] : ['Suite', `${g.run?.suite_key} v${g.run?.suite_version}`, 'suite'],
      ['Recorded verdict', badge(g.recorded_verdict, 'recorded_verdict'), 'recorded_cell'],
      ['Effective verdict', badge(g.effective_verdict, 'effective_verdict'), 'effective_cell'],
      g.run ? ['Pass rate', `${pct(g.run.pass_rate)} (${frac(g.run.passed, g.run.n)}, 95% CI ${interval(g.run.pass_rate_ci?.lower, g.run.pass_rate_ci?.upper)})`, 'pass_rate'] : null,
      g.judge ? ['Judge', `${g.judge.status ?? 'n/a'}${g.judge.cases_not_scored ? `, ${g.judge.cases_not_scored} case(s) not scored` : ''}`, 'judge'] : null,
      ['Recorded at', when(g.recorded_at), 'recorded_at'],
      ['Link', shareLink(`/gates/${encodeURIComponent(g.gate_id)}`), 'share_url'],
    ]),
    h('h2', {}, 'Reasons'),
    h('div', { 'data-field': 'reasons' }, list(g.reasons)),
    h('h2', {}, 'Warnings'),
    h('div', { 'data-field': 'warnings' }, list(g.warnings)),
    h('h2', {}, 'Override audit trail'),
    table({
      key: (o) => o.at,
      rows: overrides,
      empty: 'Never overridden.',
      columns: [
        { label: 'Who', field: 'who', cell: (o) => `${o.actor_name} (${o.actor_key_id})` },
        { label: 'When', field: 'when', cell: (o) => when(o.at) },
        { label: 'Why', field: 'why', cell: (o) => o.reason },
        { label: 'Before', field: 'before', cell: (o) => badge(o.before) },
        { label: 'After', field: 'after', cell: (o) => badge(o.after) },
      ],
    }),
    formBox,
  );
  // Only an admin sees the control (the API refuses anyone else anyway, GT5).
  if (who?.tier === 'admin' && g.effective_verdict === 'fail') {
    // aria-required, not required: the page says why it refuses, in words a screen reader announces.
    const reason = h('textarea', { id: 'override-reason', name: 'reason', rows: 3, cols: 60, 'aria-required': 'true', 'aria-describedby': 'override-help' });
    const status = h('p', { role: 'status' });
    clear(
      formBox,
      h('h2', { id: 'override-h' }, 'Override'),
      h(
        'form',
        {
          'data-form': 'override',
          onsubmit: async (e) => {
            e.preventDefault();
            if (!reason.value.trim()) {
              status.textContent = 'A reason is required.';
              reason.focus();
              return;
            }
            try {
              await api('ingestion', `/v1/gate/${encodeURIComponent(gateId)}/override`, { method: 'POST', body: { reason: reason.value } });
              await gatePage(main, gateId, _signal, who);
            } catch (error) {
              status.textContent = `Refused: ${error.message}`;
            }
          },
        },
        h('label', { for: 'override-reason' }, 'Reason (required, audited)'),
        reason,
        h('p', { id: 'override-help', class: 'muted' }, 'Passes this gate; the recorded verdict stays as it was.'),
        h('button', { type: 'submit' }, 'Override to pass'),
        status,
      ),
    );
  }
}

// ------------------------------------------------------------------------------------------------ judges

/** A certification's scope as a person reads it: `suite <key>`, or `rubric <first 12 hex of its sha256>…`. */
export function scopeText(scope) {
  if (!scope) return 'none measured';
  if (scope.startsWith('suite:')) return `suite ${scope.slice('suite:'.length)}`;
  if (scope.startsWith('rubric:')) return `rubric ${scope.slice('rubric:'.length, 'rubric:'.length + 12)}…`;
  return scope;
}

export async function judgesPage(main) {
  const data = await api('regression', '/v1/judges');
  const rate = (r) => (r ? `${pct(r.value)} (${frac(r.numerator, r.denominator)}, 95% CI ${interval(r.lower, r.upper)})` : 'n/a');
  const corr = (c) => (c ? (c.r === null ? `n/a (${c.reason ?? 'undefined'}, n=${c.n})` : `${num3(c.r)} (n=${c.n})`) : 'n/a');
  const label = (j) => `${j.judge_model} · ${j.prompt_version} · ${scopeText(j.scope)}`;
  const canvas = h('canvas', { role: 'img', 'aria-label': 'Agreement of each calibrated judge scope with human labels, 95% intervals, against its target' });
  clear(
    main,
    h('h1', {}, 'Judges'),
    h('p', {}, data.configured ? `Configured judge: ${data.configured.judge_model} · ${data.configured.prompt_version}` : 'No judge is configured on this service.'),
    h('p', { class: 'muted' }, 'A certification holds for one scope - the model pin, the prompt version and the rubric (by hash) or suite it was measured on; a gate trusts the judge only on the scopes its cases use (J4).'),
    table({
      caption: 'Each calibrated scope of each judge pin with its latest measured calibration against human labels (J4).',
      key: (j) => `${j.judge_model}|${j.prompt_version}|${j.scope ?? ''}`,
      rows: data.judges,
      empty: 'No judge has been calibrated, and none is configured.',
      columns: [
        { label: 'Model', field: 'model', cell: (j) => j.judge_model },
        { label: 'Prompt', field: 'prompt_version', cell: (j) => j.prompt_version },
        { label: 'Scope', field: 'scope', cell: (j) => h('span', { title: j.scope ?? '' }, scopeText(j.scope)) },
        { label: 'Set', field: 'set_name', cell: (j) => j.set_name ?? 'n/a' },
        { label: 'Status', field: 'status', cell: (j) => badge(j.status) },
        { label: 'Why', field: 'reasons', cell: (j) => (j.reasons.length ? j.reasons.join(', ') : 'meets every target') },
        { label: 'Items', num: true, field: 'n', cell: (j) => (j.n === null ? 'n/a' : String(j.n)) },
        { label: 'Agreement', field: 'agreement', cell: (j) => rate(j.agreement) },
        { label: 'Target', field: 'target', cell: (j) => (j.targets ? `agreement ${pct(j.targets.agreement)}, kappa ${num3(j.targets.kappa)}` : 'n/a') },
        { label: 'Kappa', num: true, field: 'kappa', cell: (j) => num3(j.kappa) },
        { label: 'Sensitivity', field: 'sensitivity', cell: (j) => rate(j.sensitivity) },
        { label: 'Specificity', field: 'specificity', cell: (j) => rate(j.specificity) },
        { label: 'Verbosity r (judge / human / excess)', field: 'verbosity', cell: (j) => (j.verbosity_bias ? `${corr(j.verbosity_bias.judge)} / ${corr(j.verbosity_bias.human)} / ${num3(j.verbosity_bias.excess)}` : 'n/a') },
        { label: 'Calibrated', field: 'calibrated_at', cell: (j) => when(j.calibrated_at) || 'never' },
      ],
    }),
    data.judges.some((j) => j.agreement) ? h('div', { class: 'chart small', 'data-chart': 'agreement' }, canvas) : null,
  );
  if (data.judges.some((j) => j.agreement)) agreementChart(canvas, data.judges, label, data.minimum_targets?.agreement);
}
