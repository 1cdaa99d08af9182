import type { Io } from './command';
import { createProgress, formatDuration, NO_PROGRESS, progressEnabled, TerminalProgress } from './progress';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const io = (o: Partial<Io> = {}): Io => ({ out: () => undefined, err: () => undefined, env: {}, isTty: true, errIsTty: true, writeErr: () => undefined, cwd: '/', ...o });

describe('unit: the progress line (X5)', () => {
  it('is shown only when stdout and stderr are terminals, never with --json', () => {
    expect(progressEnabled(io(), false)).toBe(true);
    expect(progressEnabled(io(), true)).toBe(false);
    expect(progressEnabled(io({ isTty: false }), false)).toBe(false);
    expect(progressEnabled(io({ errIsTty: false }), false)).toBe(false);
    expect(progressEnabled(io({ env: { EVALS_NO_PROGRESS: '1' } }), false)).toBe(false);
    expect(createProgress(io({ isTty: false }), false, 'x')).toBe(NO_PROGRESS);
  });

  it('stays quiet for the first second, then draws a bar with the rate (cases/s) and the ETA', () => {
    const c = clock();
    const writes: string[] = [];
    const p = new TerminalProgress((t) => writes.push(t), c.now, 'scoring', 1000, 100, false);
    p.update(0, 1000);
    c.advance(500);
    p.update(100, 1000);
    expect(writes).toHaveLength(0);
    c.advance(500);
    p.update(200, 1000); // 200 cases in 1 s since the first count: 200 cases/s, 800 left: 4 s
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^\rscoring \[#####-{19}\]  20% 200\/1000 200 cases\/s ETA 4s \(1\.0s\)$/);
    c.advance(50);
    p.update(210, 1000);
    expect(writes).toHaveLength(1); // throttled to one draw per 100 ms
    p.stop();
    expect(writes[writes.length - 1]).toMatch(/^\r +\r$/); // erased before the result is printed
    p.update(300, 1000);
    expect(writes).toHaveLength(2);
  });

  it('without a known total it is a spinner with the elapsed time: it never invents a number', () => {
    const c = clock();
    const p = new TerminalProgress(() => undefined, c.now, 'waiting for the server', 1000, 100, false);
    c.advance(2500);
    expect(p.line()).toMatch(/^[|/\\-] waiting for the server 2\.5s$/);
  });

  it('formats durations', () => {
    expect(formatDuration(4.4)).toBe('4s');
    expect(formatDuration(125)).toBe('2m05s');
    expect(formatDuration(7260)).toBe('2h01m');
    expect(formatDuration(Infinity)).toBe('--');
  });
});
