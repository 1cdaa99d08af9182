/** Terminal output: rates always with their denominator and 95% interval (GT6). NO_COLOR respected. */
export interface Styles {
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
}

export function styles(env: Readonly<Record<string, string | undefined>>, isTty: boolean): Styles {
  const on = isTty && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
  const wrap = (code: number, reset: number) => (s: string) => (on ? `\u001b[${code}m${s}\u001b[${reset}m` : s);
  return { bold: wrap(1, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), dim: wrap(2, 22) };
}

export function percent(x: number, digits = 1): string {
  return `${(x * 100).toFixed(digits)}%`;
}

/** `84.0% (42/50, 95% CI 71.5-91.7%)`; an empty run says so instead of inventing a rate. */
export function formatRate(successes: number, n: number, lower: number, upper: number): string {
  if (n === 0) return `n/a (0/0, 95% CI 0.0-100.0%)`;
  return `${percent(successes / n)} (${successes}/${n}, 95% CI ${(lower * 100).toFixed(1)}-${(upper * 100).toFixed(1)}%)`;
}

/** A signed difference in percentage points with its interval: `-20.0 pp (95% CI -33.9 to -5.2 pp)`. */
export function formatDiff(diff: number | null, lower: number, upper: number): string {
  const pp = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}`;
  if (diff === null) return `n/a (95% CI ${pp(lower)} to ${pp(upper)} pp)`;
  return `${pp(diff)} pp (95% CI ${pp(lower)} to ${pp(upper)} pp)`;
}

export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => visibleLength(r[i] ?? ''))));
  return rows.map((r) => r.map((c, i) => c + ' '.repeat(widths[i] - visibleLength(c))).join('  ').trimEnd()).join('\n');
}

function visibleLength(s: string): number {
  return s.replace(/\u001b\[[0-9;]*m/g, '').length;
}
