import { exposedGc, shouldCollect, startIdleCollector, type IdleCollectorProbe } from './idle-gc';

describe('unit: the idle collector of evals serve (issue 15)', () => {
  const options = { intervalMs: 100, growthBytes: 50, idleBelow: 0.05 };

  it('collects only when the loop was idle and the heap grew by the threshold since the last collection', () => {
    expect(shouldCollect({ heapUsed: 150, baseline: 100, busyShare: 0.01 }, options)).toBe(true);
    expect(shouldCollect({ heapUsed: 149, baseline: 100, busyShare: 0.01 }, options)).toBe(false);
    expect(shouldCollect({ heapUsed: 500, baseline: 100, busyShare: 0.5 }, options)).toBe(false);
  });

  it('runs one collection per idle spell after a burst, never during work, and measures growth from there', () => {
    jest.useFakeTimers();
    try {
      let heap = 100;
      let busy = 0.9;
      const collect = jest.fn(() => (heap = 110));
      const probe: IdleCollectorProbe = { heapUsed: () => heap, busyShare: () => busy, collect };
      const stop = startIdleCollector(options, probe);
      heap = 400;
      jest.advanceTimersByTime(300); // a burst: busy, however much it grew
      expect(collect).not.toHaveBeenCalled();
      busy = 0;
      jest.advanceTimersByTime(100);
      expect(collect).toHaveBeenCalledTimes(1);
      jest.advanceTimersByTime(500); // still idle, grown by nothing since
      expect(collect).toHaveBeenCalledTimes(1);
      heap = 159; // below the threshold from the new baseline (110)
      jest.advanceTimersByTime(100);
      expect(collect).toHaveBeenCalledTimes(1);
      heap = 160;
      jest.advanceTimersByTime(100);
      expect(collect).toHaveBeenCalledTimes(2);
      stop();
      heap = 1000;
      jest.advanceTimersByTime(1000);
      expect(collect).toHaveBeenCalledTimes(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it("reaches V8's full collection without --expose-gc, and leaves gc() unexposed to new contexts", () => {
    const gc = exposedGc();
    expect(gc).toEqual(expect.any(Function));
    gc!();
    expect(require('node:vm').runInNewContext('typeof gc')).toBe('undefined');
  });
});
