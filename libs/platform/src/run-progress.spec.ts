import { RunProgress } from './run-progress';

/** RunProgress (issue 15): a run's waiter is woken by the read model's commit, never later than its own timer. */
describe('RunProgress', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const settled = async (p: Promise<void>): Promise<boolean> => {
    let done = false;
    void p.then(() => (done = true));
    await Promise.resolve();
    await Promise.resolve();
    return done;
  };

  it('wakes the waiter of a run when that run is recorded, before its timer', async () => {
    const progress = new RunProgress();
    const wait = progress.next('r1', 200);
    expect(await settled(wait.woken)).toBe(false);
    progress.recorded(['r0', 'r1']);
    expect(await settled(wait.woken)).toBe(true);
    expect(progress.waitedFor).toBe(0);
  });

  it('does not wake the waiters of other runs', async () => {
    const progress = new RunProgress();
    const wait = progress.next('r1', 200);
    progress.recorded(['r2']);
    expect(await settled(wait.woken)).toBe(false);
    wait.cancel();
  });

  it('ends at its timer when nothing is recorded (a deployment: polling as before), and leaves nothing behind', async () => {
    const progress = new RunProgress();
    const wait = progress.next('r1', 200);
    jest.advanceTimersByTime(199);
    expect(await settled(wait.woken)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(await settled(wait.woken)).toBe(true);
    expect(progress.waitedFor).toBe(0);
  });

  it('wakes every waiter of the run, and a cancelled wait neither fires nor stays registered', async () => {
    const progress = new RunProgress();
    const a = progress.next('r1', 200);
    const b = progress.next('r1', 200);
    const c = progress.next('r3', 200);
    c.cancel();
    expect(progress.waitedFor).toBe(1);
    progress.recorded(['r1']);
    expect(await settled(a.woken)).toBe(true);
    expect(await settled(b.woken)).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });
});
