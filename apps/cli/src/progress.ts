import type { Io } from './command';

/**
 * A progress line on stderr (X5): a bar with the rate (cases/s) and the ETA when the total is known, else a
 * spinner with the elapsed time and what we are waiting for. It appears only after a second (short runs
 * stay quiet), only when stdout and stderr are both terminals, never with --json, and is erased before the
 * result is printed. Plain ASCII and no colour, so NO_COLOR and dumb terminals are fine.
 */
export interface Progress {
  /** Known total: draw a bar. */
  update(done: number, total: number): void;
  /** What we are waiting for (spinner text, or the bar's label). */
  phase(label: string): void;
  stop(): void;
}

export const NO_PROGRESS: Progress = { update() {}, phase() {}, stop() {} };

export function progressEnabled(io: Io, json: boolean | undefined): boolean {
  return !json && io.isTty && io.errIsTty === true && io.writeErr !== undefined && io.env.EVALS_NO_PROGRESS === undefined;
}

export function createProgress(io: Io, json: boolean | undefined, label: string, options: { delayMs?: number; intervalMs?: number } = {}): Progress {
  if (!progressEnabled(io, json)) return NO_PROGRESS;
  return new TerminalProgress(io.writeErr!, io.now ?? Date.now, label, options.delayMs ?? 1000, options.intervalMs ?? 100);
}

const SPINNER = ['|', '/', '-', '\\'];
const BAR_WIDTH = 24;

export class TerminalProgress implements Progress {
  private readonly started: number;
  private lastDraw = 0;
  private drawn = 0;
  private frame = 0;
  private done = 0;
  private total: number | null = null;
  private firstCountAt: number | null = null;
  private firstCount = 0;
  private readonly timer: NodeJS.Timeout | null;
  private stopped = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly now: () => number,
    private label: string,
    private readonly delayMs: number,
    private readonly intervalMs: number,
    withTimer = true,
  ) {
    this.started = now();
    this.timer = withTimer ? setInterval(() => this.draw(false), intervalMs) : null;
    this.timer?.unref();
  }

  update(done: number, total: number): void {
    if (this.firstCountAt === null || done < this.firstCount) {
      this.firstCountAt = this.now();
      this.firstCount = done;
    }
    this.done = done;
    this.total = total;
    this.draw(false);
  }

  phase(label: string): void {
    this.label = label;
    this.draw(true);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.drawn > 0) this.write(`\r${' '.repeat(this.drawn)}\r`);
    this.drawn = 0;
  }

  /** The line as it would be drawn now (tests). */
  line(): string {
    const now = this.now();
    const elapsed = (now - this.started) / 1000;
    if (this.total === null || this.total <= 0) {
      this.frame = (this.frame + 1) % SPINNER.length;
      return `${SPINNER[this.frame]} ${this.label} ${elapsed.toFixed(1)}s`;
    }
    const fraction = Math.min(1, this.done / this.total);
    const filled = Math.round(fraction * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
    const since = this.firstCountAt === null ? 0 : (now - this.firstCountAt) / 1000;
    const rate = since > 0 ? (this.done - this.firstCount) / since : 0;
    const eta = rate > 0 ? formatDuration((this.total - this.done) / rate) : '--';
    const speed = rate > 0 ? rate.toFixed(rate >= 100 ? 0 : 1) : '--';
    return `${this.label} ${bar} ${(fraction * 100).toFixed(0).padStart(3)}% ${this.done}/${this.total} ${speed} cases/s ETA ${eta} (${elapsed.toFixed(1)}s)`;
  }

  private draw(force: boolean): void {
    if (this.stopped) return;
    const now = this.now();
    if (now - this.started < this.delayMs) return;
    if (!force && now - this.lastDraw < this.intervalMs) return;
    this.lastDraw = now;
    const text = this.line();
    this.write(`\r${text}${' '.repeat(Math.max(0, this.drawn - text.length))}`);
    this.drawn = Math.max(this.drawn, text.length);
  }
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
