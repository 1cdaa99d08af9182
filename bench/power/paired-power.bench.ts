/**
 * Power simulation of the regression comparison (G7, G8; issue 14): how often `compareRuns` calls a true
 * 5-point drop `regressed`, and how often it calls no drop at all `regressed`, when it decides with the
 * paired interval (Newcombe 1998 paired method 10, `pairedDiff`) against when it decides with the
 * independent one (Newcombe hybrid score, `newcombeDiff`) - on the same simulated runs.
 * Run: `npm run bench:power`. Prints numbers only and asserts nothing (docs/testing.md); docs/benchmarks.md
 * explains them and docs/EVAL-METHODOLOGY.md section 11 says what they mean.
 *
 * The model. A suite is `cases` cases; case i has a latent pass probability p_i, drawn independently from
 * Beta(a, b) (default Beta(0.75, 0.25): mean 0.75, U-shaped - many cases nearly always pass, some nearly
 * always fail, the rest in between). A run scores every case once: case i passes with its probability,
 * independently of every other case and of the other run. Both runs score the same cases, so their
 * outcomes are correlated only through the case difficulty: the correlation of one case's outcomes in two
 * runs is Var(p) / (mu (1 - mu)) = 1 / (a + b + 1), 0.5 for the default. That correlation is what pairing
 * uses.
 *   Scenario A (a true drop of 5 points): the baseline passes case i with p_i, the candidate with
 *     q_i = p_i * (1 - 0.05 / pbar), pbar the mean of this suite's p_i; so the mean pass probability of the
 *     candidate is exactly 0.05 below the baseline's on every simulated suite, and every case loses the same
 *     share of its probability (q_i stays in [0, 1]).
 *   Scenario B (no drop): both runs pass case i with p_i.
 * Each run pair draws a new suite. Each pair is compared twice with the real `compareRuns`: without the
 * paired cells (the independent verdict) and with them (the paired verdict), at regression_threshold 0, so
 * the verdict is decided by the interval alone (`regressed` iff the interval's upper bound is below 0; with
 * binary scorers that already implies score_drop > 0). `inconclusive_noise` comparisons carry
 * `cases_needed` (McNemar/Connor for paired, pooled normal for independent), whose median is reported.
 *
 * A second table repeats both scenarios for other spreads of case difficulty with the same mean 0.75
 * (a + b = 10, 2, 1, 0.4, and no spread at all: every p_i = 0.75), to show how the gain of pairing grows
 * with the run-to-run correlation.
 *
 * A third check runs scenario A again at the cases per run that McNemar's formula (Connor 1987) asks for
 * with the true rates of the simulation, and - in the setting the pooled-normal formula is for, two
 * different suites of independently drawn cases - at the cases per run that formula asks for with the
 * model's rates (0.75 against 0.70): the share detected there should be about the promised 80%.
 *
 * Options (flag or environment): --seed / BENCH_SEED (default `paired-power-1`), --pairs / BENCH_PAIRS
 * (10 000), --cases / BENCH_CASES (200), --drop / BENCH_DROP (0.05), --no-spread-table, --no-plan-check.
 * Same seed and options give the same numbers on the same Node version: the generator is libs/stats
 * `createRng` (sfc32, exact integer arithmetic), but the Beta sampler uses Math.log, Math.pow and Math.cos,
 * which ECMAScript leaves implementation-approximated. The last line is one JSON object.
 */
import { performance } from 'node:perf_hooks';
import { compareRuns, type Comparison } from '@evals/domain';
import { createRng, sampleSizePaired, sampleSizeTwoProportions, wilson, type Rng } from '@evals/stats';

// ---------------------------------------------------------------------------------------------------------
// The case model (pure; exported for paired-power.spec.ts)

/** Mean and spread of the latent per-case pass probabilities. `null` shape: every case has p = mean. */
export interface CaseModel {
  readonly name: string;
  /** Beta(a, b); null for no spread (every p_i = fixed). */
  readonly beta: { readonly a: number; readonly b: number } | null;
  /** Used only when beta is null. */
  readonly fixed?: number;
}

/** Uniform in (0, 1]: never 0, so its logarithm and its powers are finite. */
function uniformOpen(rng: Rng): number {
  return 1 - rng.next();
}

/** Standard normal by Box-Muller (one of the two values; simple, and the cost is irrelevant here). */
function standardNormal(rng: Rng): number {
  const u1 = uniformOpen(rng);
  const u2 = rng.next();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * Gamma(shape, 1) by Marsaglia and Tsang (2000), "A simple method for generating gamma variables", ACM TOMS
 * 26:363-372; for shape < 1 their boost: Gamma(shape) = Gamma(shape + 1) * U^(1 / shape).
 */
export function sampleGamma(rng: Rng, shape: number): number {
  if (!(shape > 0) || !Number.isFinite(shape)) throw new Error(`gamma shape must be a finite number > 0, got ${shape}`);
  if (shape < 1) return sampleGamma(rng, shape + 1) * Math.pow(uniformOpen(rng), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = standardNormal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = uniformOpen(rng);
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** Beta(a, b) as X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b). */
export function sampleBeta(rng: Rng, a: number, b: number): number {
  for (;;) {
    const x = sampleGamma(rng, a);
    const y = sampleGamma(rng, b);
    // Both can underflow to 0 for tiny shapes; draw again rather than divide 0 by 0.
    if (x + y > 0) return x / (x + y);
  }
}

/** The latent pass probabilities of one suite of `cases` cases. */
export function drawSuite(rng: Rng, model: CaseModel, cases: number): Float64Array {
  const p = new Float64Array(cases);
  for (let i = 0; i < cases; i++) p[i] = model.beta ? sampleBeta(rng, model.beta.a, model.beta.b) : (model.fixed as number);
  return p;
}

/**
 * Scenario A's candidate probabilities: q_i = p_i * (1 - drop / pbar), so mean(q) = mean(p) - drop exactly
 * (up to rounding) and each q_i stays in [0, p_i]. Needs mean(p) >= drop.
 */
export function lowered(p: Float64Array, drop: number): Float64Array {
  let sum = 0;
  for (let i = 0; i < p.length; i++) sum += p[i];
  const pbar = sum / p.length;
  if (pbar < drop) throw new Error(`the suite's mean pass probability ${pbar} is below the drop ${drop}`);
  const factor = 1 - drop / pbar;
  const q = new Float64Array(p.length);
  for (let i = 0; i < p.length; i++) q[i] = p[i] * factor;
  return q;
}

/** One run pair on one suite: the paired 2 x 2 of the baseline (pass prob. p) and the candidate (q). */
export interface PairCells {
  readonly both: number;
  readonly baseline_only: number;
  readonly run_only: number;
  readonly neither: number;
}

/** Scores every case once in each run, baseline first, case by case, with one draw per case per run. */
export function scorePair(rng: Rng, p: Float64Array, q: Float64Array): PairCells {
  let both = 0;
  let baselineOnly = 0;
  let runOnly = 0;
  let neither = 0;
  for (let i = 0; i < p.length; i++) {
    const base = rng.next() < p[i];
    const run = rng.next() < q[i];
    if (base && run) both++;
    else if (base) baselineOnly++;
    else if (run) runOnly++;
    else neither++;
  }
  return { both, baseline_only: baselineOnly, run_only: runOnly, neither };
}

export type Scenario = 'A' | 'B';

/**
 * The RNG of one scenario of one model: scenarios and models draw from separate streams, so changing one
 * leaves the others' numbers as they were.
 */
export function scenarioRng(seed: string, model: CaseModel, scenario: Scenario): Rng {
  return createRng(`${seed}/${model.name}/${scenario}`);
}

/** The next simulated pair of a scenario: a new suite, then both runs on it. */
export function nextPair(rng: Rng, model: CaseModel, scenario: Scenario, cases: number, drop: number): { cells: PairCells; p: Float64Array; q: Float64Array } {
  const p = drawSuite(rng, model, cases);
  const q = scenario === 'A' ? lowered(p, drop) : p;
  return { cells: scorePair(rng, p, q), p, q };
}

/** Both verdicts of one pair, from the real comparison (threshold 0: the interval decides). */
export function verdicts(cells: PairCells, threshold = 0): { independent: Comparison; paired: Comparison } {
  const n = cells.both + cells.baseline_only + cells.run_only + cells.neither;
  const basePassed = cells.both + cells.baseline_only;
  const runPassed = cells.both + cells.run_only;
  const run = { run_id: 'candidate', n, passed: runPassed, score: runPassed / n };
  const baseline = { run_id: 'baseline', n, passed: basePassed, score: basePassed / n };
  return { independent: compareRuns(run, baseline, threshold), paired: compareRuns(run, baseline, threshold, cells) };
}

// ---------------------------------------------------------------------------------------------------------
// Tallies

interface MethodTally {
  regressed: number;
  inconclusive: number;
  noRegression: number;
  /** cases_needed.per_run of each inconclusive comparison that has one. */
  casesNeeded: number[];
  casesNeededNull: number;
}

interface ScenarioResult {
  readonly scenario: Scenario;
  readonly pairs: number;
  readonly independent: MethodTally;
  readonly paired: MethodTally;
  /** Pairs where exactly one method said regressed. */
  readonly onlyPaired: number;
  readonly onlyIndependent: number;
  /** Mean over the simulated suites of the true cell probabilities and pass probabilities. */
  readonly truth: { readonly p10: number; readonly p01: number; readonly pBase: number; readonly pRun: number };
  /** Time this scenario took (printed nowhere alone; the total is). */
  readonly ms: number;
}

function emptyTally(): MethodTally {
  return { regressed: 0, inconclusive: 0, noRegression: 0, casesNeeded: [], casesNeededNull: 0 };
}

function tally(t: MethodTally, c: Comparison): void {
  if (c.verdict === 'regressed') t.regressed++;
  else if (c.verdict === 'no_regression') t.noRegression++;
  else {
    t.inconclusive++;
    if (c.cases_needed) t.casesNeeded.push(c.cases_needed.per_run);
    else t.casesNeededNull++;
  }
}

export function simulateScenario(seed: string, model: CaseModel, scenario: Scenario, pairs: number, cases: number, drop: number, stream = ''): ScenarioResult {
  const started = performance.now();
  const rng = stream === '' ? scenarioRng(seed, model, scenario) : createRng(`${seed}/${model.name}/${stream}`);
  const independent = emptyTally();
  const paired = emptyTally();
  let onlyPaired = 0;
  let onlyIndependent = 0;
  let p10 = 0;
  let p01 = 0;
  let pBase = 0;
  let pRun = 0;
  for (let k = 0; k < pairs; k++) {
    const { cells, p, q } = nextPair(rng, model, scenario, cases, drop);
    const v = verdicts(cells);
    tally(independent, v.independent);
    tally(paired, v.paired);
    const ri = v.independent.verdict === 'regressed';
    const rp = v.paired.verdict === 'regressed';
    if (rp && !ri) onlyPaired++;
    if (ri && !rp) onlyIndependent++;
    let s10 = 0;
    let s01 = 0;
    let sp = 0;
    let sq = 0;
    for (let i = 0; i < cases; i++) {
      s10 += p[i] * (1 - q[i]);
      s01 += (1 - p[i]) * q[i];
      sp += p[i];
      sq += q[i];
    }
    p10 += s10 / cases;
    p01 += s01 / cases;
    pBase += sp / cases;
    pRun += sq / cases;
  }
  return {
    scenario,
    pairs,
    independent,
    paired,
    onlyPaired,
    onlyIndependent,
    truth: { p10: p10 / pairs, p01: p01 / pairs, pBase: pBase / pairs, pRun: pRun / pairs },
    ms: performance.now() - started,
  };
}

/** The model's mean pass probability: a / (a + b), or the fixed value. */
export function modelMean(model: CaseModel): number {
  return model.beta ? model.beta.a / (model.beta.a + model.beta.b) : (model.fixed as number);
}

/**
 * The setting the independent formula is for (two suite versions): the baseline and the candidate score two
 * different suites of `cases` cases, each drawn from the model; the candidate's cases have
 * q_i = p_i * (1 - drop / mean), mean the model's, so a candidate case passes with probability mean - drop
 * and a baseline case with mean, all independently. Returns how many pairs `compareRuns` (no paired cells,
 * threshold 0) calls regressed.
 */
export function simulateIndependentSamples(seed: string, model: CaseModel, pairs: number, cases: number, drop: number): number {
  const rng = createRng(`${seed}/${model.name}/independent-samples`);
  const factor = 1 - drop / modelMean(model);
  let regressed = 0;
  for (let k = 0; k < pairs; k++) {
    const p = drawSuite(rng, model, cases);
    const p2 = drawSuite(rng, model, cases);
    let basePassed = 0;
    let runPassed = 0;
    for (let i = 0; i < cases; i++) {
      if (rng.next() < p[i]) basePassed++;
      if (rng.next() < p2[i] * factor) runPassed++;
    }
    const c = compareRuns(
      { run_id: 'candidate', n: cases, passed: runPassed, score: runPassed / cases },
      { run_id: 'baseline', n: cases, passed: basePassed, score: basePassed / cases },
      0,
    );
    if (c.verdict === 'regressed') regressed++;
  }
  return regressed;
}

/** The lower median: the middle value, or the lower of the two middle ones; null for none. */
export function lowerMedian(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor((s.length - 1) / 2)];
}

/** Nearest-rank quantile (0 < f <= 1). */
function quantile(xs: readonly number[], f: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.max(0, Math.ceil(f * s.length) - 1)];
}

/** The run-to-run correlation of one case's outcome under the model (scenario B): 1 / (a + b + 1). */
export function outcomeCorrelation(model: CaseModel): number {
  return model.beta ? 1 / (model.beta.a + model.beta.b + 1) : 0;
}

// ---------------------------------------------------------------------------------------------------------
// Options and output

interface Options {
  readonly seed: string;
  readonly pairs: number;
  readonly cases: number;
  readonly drop: number;
  readonly spreadTable: boolean;
  readonly planCheck: boolean;
}

function option(argv: readonly string[], flag: string, env: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === flag) return argv[i + 1];
    if (argv[i].startsWith(`${flag}=`)) return argv[i].slice(flag.length + 1);
  }
  const e = process.env[env];
  return e === undefined || e === '' ? undefined : e;
}

export function parseOptions(argv: readonly string[]): Options {
  const int = (flag: string, env: string, fallback: number) => {
    const raw = option(argv, flag, env);
    const n = raw === undefined ? fallback : Number(raw.replace(/_/g, ''));
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} / ${env} must be a positive integer, got ${raw}`);
    return n;
  };
  const seed = option(argv, '--seed', 'BENCH_SEED') ?? 'paired-power-1';
  const rawDrop = option(argv, '--drop', 'BENCH_DROP');
  const drop = rawDrop === undefined ? 0.05 : Number(rawDrop);
  if (!(drop > 0 && drop < 0.75)) throw new Error(`--drop / BENCH_DROP must lie in (0, 0.75), got ${rawDrop}`);
  return { seed, pairs: int('--pairs', 'BENCH_PAIRS', 10_000), cases: int('--cases', 'BENCH_CASES', 200), drop, spreadTable: !argv.includes('--no-spread-table'), planCheck: !argv.includes('--no-plan-check') };
}

/** Mean 0.75 throughout; the first is the headline model. */
export const MAIN_MODEL: CaseModel = { name: 'beta-0.75-0.25', beta: { a: 0.75, b: 0.25 } };
export const SPREAD_MODELS: readonly CaseModel[] = [
  { name: 'fixed-0.75', beta: null, fixed: 0.75 },
  { name: 'beta-7.5-2.5', beta: { a: 7.5, b: 2.5 } },
  { name: 'beta-1.5-0.5', beta: { a: 1.5, b: 0.5 } },
  MAIN_MODEL,
  { name: 'beta-0.3-0.1', beta: { a: 0.3, b: 0.1 } },
];

const log = (line: string) => process.stdout.write(`${line}\n`);
const pct = (x: number, digits = 1) => `${(100 * x).toFixed(digits)}%`;
const share = (count: number, n: number) => {
  const w = wilson(count, n);
  return `${pct(count / n, 2)} [${pct(w.lower, 2)}, ${pct(w.upper, 2)}]`;
};
const pad = (s: string, width: number) => (s.length >= width ? s : s + ' '.repeat(width - s.length));
const row = (cells: readonly string[], widths: readonly number[]) => `| ${cells.map((c, i) => pad(c, widths[i] ?? 0)).join(' | ')} |`;

function table(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  log(row(header, widths));
  log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) log(row(r, widths));
}

function main(): void {
  const opts = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const { seed, pairs, cases, drop } = opts;
  const model = MAIN_MODEL;
  log(`paired power simulation: seed "${seed}" (--seed or BENCH_SEED to change), ${pairs} run pairs per scenario, ${cases} cases per suite`);
  log(`case model: p_i ~ Beta(${model.beta?.a}, ${model.beta?.b}) (mean 0.75; run-to-run correlation of a case's outcome ${outcomeCorrelation(model).toFixed(3)})`);
  log(`scenario A: candidate q_i = p_i * (1 - ${drop} / mean(p)), a true drop of ${drop} on every suite; scenario B: q_i = p_i (no drop)`);
  log(`regression_threshold 0 (the interval alone decides); 95% intervals; cases_needed at alpha 0.05 two-sided, power 0.8`);
  log('');

  const a = simulateScenario(seed, model, 'A', pairs, cases, drop);
  const b = simulateScenario(seed, model, 'B', pairs, cases, drop);

  table(
    ['', 'independent (newcombeDiff)', 'paired (pairedDiff, method 10)'],
    [
      ['A: detected (regressed), 95% Wilson', share(a.independent.regressed, pairs), share(a.paired.regressed, pairs)],
      ['A: inconclusive_noise', pct(a.independent.inconclusive / pairs, 2), pct(a.paired.inconclusive / pairs, 2)],
      ['A: no_regression', pct(a.independent.noRegression / pairs, 2), pct(a.paired.noRegression / pairs, 2)],
      ['B: false alarm (regressed), 95% Wilson', share(b.independent.regressed, pairs), share(b.paired.regressed, pairs)],
      ['B: false alarm <= 5%?', b.independent.regressed / pairs <= 0.05 ? 'yes' : 'NO', b.paired.regressed / pairs <= 0.05 ? 'yes' : 'NO'],
      ['B: inconclusive_noise', pct(b.independent.inconclusive / pairs, 2), pct(b.paired.inconclusive / pairs, 2)],
    ],
  );
  log(`A: regressed by the paired verdict only: ${a.onlyPaired}; by the independent verdict only: ${a.onlyIndependent}`);
  log(`B: regressed by the paired verdict only: ${b.onlyPaired}; by the independent verdict only: ${b.onlyIndependent}`);
  log('');

  // What the formulas say with the true rates of the simulated population (mean over its suites).
  const t = a.truth;
  const truePaired = sampleSizePaired({ p10: t.p10, p01: t.p01 }).n_pairs;
  const trueIndependent = sampleSizeTwoProportions({ p1: t.pBase, p2: t.pRun }).n_per_group;
  const casesRow = (m: MethodTally) => {
    const med = lowerMedian(m.casesNeeded);
    return `${med ?? '-'} (quartiles ${quantile(m.casesNeeded, 0.25) ?? '-'} / ${quantile(m.casesNeeded, 0.75) ?? '-'}; ${m.casesNeeded.length} runs${m.casesNeededNull ? `, ${m.casesNeededNull} null` : ''})`;
  };
  table(
    ['cases per run for 80% power', 'independent (pooled normal, Fleiss)', 'paired (McNemar, Connor 1987)'],
    [
      ['A, inconclusive runs: median cases_needed', casesRow(a.independent), casesRow(a.paired)],
      ['with the true rates of the simulation', String(trueIndependent), String(truePaired)],
      ['B (no true drop), inconclusive runs with a drop: median cases_needed', casesRow(b.independent), casesRow(b.paired)],
    ],
  );
  log(
    `true rates (mean over the ${pairs} simulated suites of A): baseline ${t.pBase.toFixed(4)}, candidate ${t.pRun.toFixed(4)}, ` +
      `p10 (baseline only) ${t.p10.toFixed(4)}, p01 (candidate only) ${t.p01.toFixed(4)}`,
  );

  // The plan checked: at the cases each formula asks for with the true rates, in the setting it is for,
  // the share detected should be about the 80% power it promises.
  let planCheck: { paired: { cases: number; regressed: number } | null; independent: { cases: number; regressed: number } | null } = { paired: null, independent: null };
  if (opts.planCheck) {
    const nIndependent = sampleSizeTwoProportions({ p1: modelMean(model), p2: modelMean(model) - drop }).n_per_group;
    planCheck = {
      paired: truePaired === null ? null : { cases: truePaired, regressed: simulateScenario(seed, model, 'A', pairs, truePaired, drop, 'plan-paired').paired.regressed },
      independent: nIndependent === null ? null : { cases: nIndependent, regressed: simulateIndependentSamples(seed, model, pairs, nIndependent, drop) },
    };
    log('');
    log(`the plan checked: scenario A again at the cases per run each formula asks for with the true rates (${pairs} pairs each)`);
    table(
      ['setting', 'cases per run', 'detected (regressed), 95% Wilson', 'promised'],
      [
        ...(planCheck.paired ? [['same cases in both runs, paired verdict', String(planCheck.paired.cases), share(planCheck.paired.regressed, pairs), '80%']] : []),
        ...(planCheck.independent
          ? [['two different suites (two versions), independent verdict', String(planCheck.independent.cases), share(planCheck.independent.regressed, pairs), '80%']]
          : []),
      ],
    );
  }

  const spread: { model: CaseModel; a: ScenarioResult; b: ScenarioResult }[] = [];
  if (opts.spreadTable) {
    log('');
    log(`spread of case difficulty (mean 0.75 throughout; ${pairs} pairs per scenario and model, ${cases} cases):`);
    for (const m of SPREAD_MODELS) {
      spread.push(m === model ? { model: m, a, b } : { model: m, a: simulateScenario(seed, m, 'A', pairs, cases, drop), b: simulateScenario(seed, m, 'B', pairs, cases, drop) });
    }
    table(
      ['p_i', 'outcome corr.', 'A detected indep.', 'A detected paired', 'B false alarm indep.', 'B false alarm paired', 'McNemar n (true rates)'],
      spread.map((s) => [
        s.model.beta ? `Beta(${s.model.beta.a}, ${s.model.beta.b})` : `all ${s.model.fixed}`,
        outcomeCorrelation(s.model).toFixed(3),
        pct(s.a.independent.regressed / pairs, 2),
        pct(s.a.paired.regressed / pairs, 2),
        pct(s.b.independent.regressed / pairs, 2),
        pct(s.b.paired.regressed / pairs, 2),
        String(sampleSizePaired({ p10: s.a.truth.p10, p01: s.a.truth.p01 }).n_pairs),
      ]),
    );
  }

  const wallMs = performance.now() - started;
  log('');
  log(`wall time ${(wallMs / 1000).toFixed(2)} s (no assertion on it)`);
  const summary = (r: ScenarioResult) => ({
    independent: { regressed: r.independent.regressed, inconclusive: r.independent.inconclusive, no_regression: r.independent.noRegression, median_cases_needed: lowerMedian(r.independent.casesNeeded) },
    paired: { regressed: r.paired.regressed, inconclusive: r.paired.inconclusive, no_regression: r.paired.noRegression, median_cases_needed: lowerMedian(r.paired.casesNeeded) },
  });
  log(
    `BENCH_POWER_JSON ${JSON.stringify({
      seed,
      pairs,
      cases,
      drop,
      model: model.beta,
      A: summary(a),
      B: summary(b),
      true_rates_A: t,
      cases_needed_true_rates: { paired: truePaired, independent: trueIndependent },
      plan_check: planCheck,
      spread: spread.map((s) => ({ model: s.model.name, A: { independent: s.a.independent.regressed, paired: s.a.paired.regressed }, B: { independent: s.b.independent.regressed, paired: s.b.paired.regressed } })),
      wall_ms: Math.round(wallMs),
    })}`,
  );
}

if (require.main === module) main();
