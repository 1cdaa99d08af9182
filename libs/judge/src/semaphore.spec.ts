import { Semaphore } from './semaphore';

describe('Semaphore', () => {
  it('never lets more than `limit` tasks run at once, and runs them all', async () => {
    const sem = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const tasks = Array.from({ length: 10 }, (_, i) =>
      sem.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
        return i;
      }),
    );
    // Release the holders one by one, as they arrive.
    while (gates.length > 0 || sem.inUse > 0) {
      await new Promise((r) => setImmediate(r));
      const next = gates.shift();
      if (next) next();
    }
    expect(await Promise.all(tasks)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(sem.inUse).toBe(0);
  });

  it('releases on failure, and a double release is harmless', async () => {
    const sem = new Semaphore(1);
    await expect(sem.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const release = await sem.acquire();
    release();
    release();
    expect(sem.inUse).toBe(0);
  });

  it('refuses a limit below 1', () => {
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
});
