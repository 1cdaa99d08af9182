// Charts drawn by Chart.js (node_modules/chart.js, pinned; served from /dashboard/vendor/). Every chart has a
// text twin on the page - the tables hold the same numbers - and an aria-label that says what it shows.

const Chart = window.Chart;
const charts = new Set();

const INK = '#111827';
const FAIL = '#b91c1c';
const PASS = '#047857';
const BAND = 'rgba(29, 78, 216, 0.18)';
const LINE = '#1d4ed8';
const TREND = '#7c2d12';

/** Destroys the charts of the previous page (a canvas can hold one chart). */
export function resetCharts() {
  for (const c of charts) c.destroy();
  charts.clear();
}

function make(canvas, config) {
  if (!Chart) return null; // the library failed to load: the tables still say everything
  const chart = new Chart(canvas, { ...config, options: { animation: false, responsive: true, maintainAspectRatio: false, ...config.options } });
  charts.add(chart);
  return chart;
}

/** Vertical reference lines at given x values (zero, the threshold), drawn over a horizontal chart. */
const referenceLines = {
  id: 'referenceLines',
  afterDatasetsDraw(chart, _args, options) {
    const { ctx, chartArea, scales } = chart;
    for (const line of options.lines ?? []) {
      const x = scales.x.getPixelForValue(line.value);
      if (x < chartArea.left || x > chartArea.right) continue;
      ctx.save();
      ctx.strokeStyle = line.color;
      ctx.lineWidth = 2;
      ctx.setLineDash(line.dash ?? []);
      ctx.beginPath();
      ctx.moveTo(x, chartArea.top);
      ctx.lineTo(x, chartArea.bottom);
      ctx.stroke();
      ctx.fillStyle = line.color;
      ctx.font = '12px system-ui, sans-serif';
      // Labels on alternate sides and rows, so two lines close together stay readable.
      ctx.textAlign = line.side === 'left' ? 'right' : 'left';
      ctx.fillText(line.label, x + (line.side === 'left' ? -4 : 4), line.side === 'left' ? chartArea.bottom - 4 : chartArea.top + 12);
      ctx.restore();
    }
  },
};

/**
 * The comparison with the baseline (G2, G7): the 95% interval of the pass-rate difference (run minus
 * baseline, percentage points) as a bar against the zero line, the point estimate, and the score drop against
 * the regression threshold (dashed).
 */
export function differenceChart(canvas, { diff, lower, upper, scoreDrop, threshold, method }) {
  const toPp = (x) => x * 100;
  const lo = Math.min(toPp(lower), -toPp(threshold ?? 0), -toPp(scoreDrop ?? 0), 0);
  const hi = Math.max(toPp(upper), 0);
  const pad = Math.max(5, (hi - lo) * 0.1);
  const verdictColor = upper < 0 ? FAIL : lower > 0 ? PASS : INK;
  return make(canvas, {
    type: 'bar',
    data: {
      labels: ['pass-rate difference', 'score drop'],
      datasets: [
        { label: `95% interval (${method})`, data: [[toPp(lower), toPp(upper)], null], backgroundColor: BAND, borderColor: verdictColor, borderWidth: 2, borderSkipped: false, barPercentage: 0.5 },
        {
          type: 'scatter',
          label: 'estimate',
          data: [
            { x: toPp(diff), y: 'pass-rate difference' },
            ...(scoreDrop === null || scoreDrop === undefined ? [] : [{ x: -toPp(scoreDrop), y: 'score drop' }]),
          ],
          backgroundColor: verdictColor,
          pointRadius: 6,
        },
      ],
    },
    options: {
      indexAxis: 'y',
      scales: {
        x: { min: Math.floor(lo - pad), max: Math.ceil(hi + pad), title: { display: true, text: 'run minus baseline, percentage points' }, ticks: { color: INK } },
        y: { ticks: { color: INK } },
      },
      plugins: {
        legend: { labels: { color: INK } },
        referenceLines: {
          lines: [
            { value: 0, color: INK, label: 'no change' },
            ...(threshold ? [{ value: -toPp(threshold), color: FAIL, dash: [6, 4], side: 'left', label: `threshold -${toPp(threshold).toFixed(1)}` }] : []),
          ],
        },
      },
    },
    plugins: [referenceLines],
  });
}

/**
 * A scorecard's runs (SC1): the pass rate of each run with its 95% Wilson band, and the least-squares trend
 * line over the trend window (the scorecard's slope, through the mean of the runs it was fitted on).
 */
export function trendChart(canvas, runs, trend) {
  const labels = runs.map((r) => r.run_id);
  const rate = runs.map((r) => (r.summary.pass_rate === null ? null : r.summary.pass_rate * 100));
  const lower = runs.map((r) => r.summary.pass_rate_ci.lower * 100);
  const upper = runs.map((r) => r.summary.pass_rate_ci.upper * 100);
  let trendData = runs.map(() => null);
  if (trend && trend.slope_per_run !== null && trend.first_run_id && trend.last_run_id) {
    const from = labels.indexOf(trend.first_run_id);
    const to = labels.indexOf(trend.last_run_id);
    const fitted = runs.map((r, i) => ({ r, i })).filter(({ r, i }) => i >= from && i <= to && (r.completeness ?? 'complete') === 'complete');
    if (from >= 0 && to >= from && fitted.length) {
      // The fitted runs are consecutive in the trend's own order; x is their position among them.
      const meanX = (fitted.length - 1) / 2;
      const meanY = fitted.reduce((s, { r }) => s + (r.summary.pass_rate ?? 0), 0) / fitted.length;
      trendData = runs.map(() => null);
      fitted.forEach(({ i }, k) => (trendData[i] = (meanY + trend.slope_per_run * (k - meanX)) * 100));
    }
  }
  return make(canvas, {
    type: 'line',
    data: {
      labels,
      datasets: [
        { label: '95% lower', data: lower, borderColor: 'transparent', pointRadius: 0, fill: false },
        { label: '95% band', data: upper, borderColor: 'transparent', backgroundColor: BAND, pointRadius: 0, fill: '-1' },
        { label: 'pass rate', data: rate, borderColor: LINE, backgroundColor: LINE, pointRadius: 4, tension: 0 },
        { label: 'trend', data: trendData, borderColor: TREND, borderDash: [6, 4], pointRadius: 0, spanGaps: true },
      ],
    },
    options: {
      scales: {
        y: { min: 0, max: 100, title: { display: true, text: 'pass rate, %' }, ticks: { color: INK } },
        x: { ticks: { color: INK, maxRotation: 45, autoSkip: true } },
      },
      plugins: { legend: { labels: { color: INK, filter: (item) => item.text !== '95% lower' } } },
    },
  });
}

/**
 * Judges (J4): each calibrated scope's agreement with humans as its 95% interval, against its own target
 * (a red tick per scope; one dashed line as well when every scope shares the target).
 */
export function agreementChart(canvas, judges, labelOf, fallbackTarget) {
  const rows = judges.filter((j) => j.agreement && j.agreement.value !== null);
  const labels = rows.map(labelOf);
  const targets = rows.map((j) => j.targets?.agreement ?? fallbackTarget ?? null);
  const shared = targets.every((t) => t !== null && t === targets[0]) ? targets[0] : null;
  return make(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { label: 'agreement, 95% interval', data: rows.map((j) => [j.agreement.lower * 100, j.agreement.upper * 100]), backgroundColor: BAND, borderColor: LINE, borderWidth: 2, borderSkipped: false, barPercentage: 0.5 },
        { type: 'scatter', label: 'agreement', data: rows.map((j, i) => ({ x: j.agreement.value * 100, y: labels[i] })), backgroundColor: LINE, pointRadius: 6 },
        { type: 'scatter', label: 'target', data: rows.map((j, i) => (targets[i] === null ? null : { x: targets[i] * 100, y: labels[i] })), borderColor: FAIL, backgroundColor: FAIL, pointStyle: 'line', rotation: 90, pointRadius: 12, borderWidth: 3 },
      ],
    },
    options: {
      indexAxis: 'y',
      scales: { x: { min: 0, max: 100, title: { display: true, text: 'agreement with human labels, %' }, ticks: { color: INK } }, y: { ticks: { color: INK } } },
      plugins: { legend: { labels: { color: INK } }, referenceLines: { lines: shared !== null ? [{ value: shared * 100, color: FAIL, dash: [6, 4], label: `target ${(shared * 100).toFixed(0)}%` }] : [] } },
    },
    plugins: [referenceLines],
  });
}
