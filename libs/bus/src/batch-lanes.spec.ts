import { AckFloorProbe, BatchSettlement, HandledLedger, Limiter } from './batch-lanes';

describe('unit: the inbound consumer\'s lanes (issue 15)', () => {
  describe('BatchSettlement.sealFloor', () => {
    it('asks below the run of consecutive batch seqs that ends at the seal, at once when nothing below is in the batch', async () => {
      const s = new BatchSettlement([10, 11, 12, 13]);
      await expect(s.sealFloor(13)).resolves.toBe(10);
      await expect(s.sealFloor(10)).resolves.toBe(10);
    });

    it('below a gap, waits for the batch\'s messages there: acknowledged gives the gap\'s end, not acknowledged gives null', async () => {
      const s = new BatchSettlement([1, 2, 4, 5]);
      let answer: number | null | undefined;
      void s.sealFloor(5).then((x) => (answer = x));
      s.acked([4]);
      await new Promise((r) => setImmediate(r));
      expect(answer).toBeUndefined();
      s.acked([1]);
      await new Promise((r) => setImmediate(r));
      expect(answer).toBeUndefined();
      s.acked([2]);
      await new Promise((r) => setImmediate(r));
      expect(answer).toBe(4);

      const t = new BatchSettlement([1, 2, 4, 5]);
      const nothing = t.sealFloor(5);
      t.notAcked([2]);
      await expect(nothing).resolves.toBeNull();
    });

    it('a barrier inside the range moves the floor question past it, after it is settled', async () => {
      const s = new BatchSettlement([1, 2, 3, 4], [2]);
      const floor = s.sealFloor(4);
      s.acked([1]);
      s.acked([2]);
      await expect(floor).resolves.toBe(3);
    });

    it('the first settlement wins', async () => {
      const s = new BatchSettlement([1, 2, 3]);
      s.acked([1]);
      s.notAcked([1]);
      await expect(s.allSettledBefore(2)).resolves.toBe(true);
    });
  });

  describe('AckFloorProbe', () => {
    it('one request answers every seal asked in the same turn, and a yes is remembered', async () => {
      const ask = jest.fn(async () => true);
      const probe = new AckFloorProbe(ask);
      await expect(Promise.all([5, 9, 7].map((s) => probe.allAcknowledgedBefore(s)))).resolves.toEqual([true, true, true]);
      expect(ask.mock.calls).toEqual([[9]]);
      await expect(probe.allAcknowledgedBefore(8)).resolves.toBe(true);
      expect(ask).toHaveBeenCalledTimes(1);
    });

    it('narrows a no by bisection: the answers are the floor\'s', async () => {
      const floor = 20; // acknowledged before 21
      const ask = jest.fn(async (seq: number) => seq <= floor + 1);
      const probe = new AckFloorProbe(ask);
      const seqs = [3, 8, 15, 21, 22, 30, 40, 50];
      await expect(Promise.all(seqs.map((s) => probe.allAcknowledgedBefore(s)))).resolves.toEqual(seqs.map((s) => s <= 21));
      expect(ask.mock.calls.length).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(seqs.length)) + 1);
    });

    it('a seal asked while a request is in flight waits for the next request, made after it asked', async () => {
      let floorNow = 0;
      const inFlight: Array<() => void> = [];
      const ask = jest.fn(async (seq: number) => {
        const at = floorNow;
        await new Promise<void>((r) => inFlight.push(r));
        return seq <= at + 1;
      });
      const probe = new AckFloorProbe(ask);
      const first = probe.allAcknowledgedBefore(5);
      await new Promise((r) => setImmediate(r));
      expect(ask).toHaveBeenCalledTimes(1);
      floorNow = 10;
      const second = probe.allAcknowledgedBefore(6);
      inFlight.shift()!();
      await expect(first).resolves.toBe(false);
      await new Promise((r) => setImmediate(r));
      inFlight.shift()!();
      await expect(second).resolves.toBe(true);
    });

    it('a failed request fails the seals of its round', async () => {
      const probe = new AckFloorProbe(async () => {
        throw new Error('no responders');
      });
      await expect(probe.allAcknowledgedBefore(3)).rejects.toThrow('no responders');
    });
  });

  describe('HandledLedger (issue 28: the scoring worker\'s seals)', () => {
    it('what this process handled needs no question: the gap is the highest seq before the seal it did not handle', () => {
      const l = new HandledLedger();
      for (const seq of [1, 2, 3, 5, 6]) l.handled(seq);
      expect(l.gapBefore(4)).toBeNull();
      expect(l.gapBefore(7)).toBe(4);
      expect(l.gapBefore(5)).toBe(4);
      l.handled(4);
      expect(l.gapBefore(7)).toBeNull();
      // The contiguous prefix absorbed every seq: nothing is held.
      expect(l.size).toBe(0);
    });

    it('the server\'s floor closes a gap of another process\'s message, and the seqs handled above it join the prefix', () => {
      const l = new HandledLedger();
      for (const seq of [11, 12, 14]) l.handled(seq);
      // Nothing below 11 was seen here: the server is asked about all of it.
      expect(l.gapBefore(13)).toBe(10);
      l.acknowledgedBefore(11);
      expect(l.gapBefore(13)).toBeNull();
      expect(l.gapBefore(15)).toBe(13);
      expect(l.size).toBe(1);
      // A floor behind what is known changes nothing; one past a held seq drops it.
      l.acknowledgedBefore(5);
      expect(l.gapBefore(13)).toBeNull();
      l.acknowledgedBefore(15);
      expect(l.size).toBe(0);
      expect(l.gapBefore(15)).toBeNull();
      expect(l.gapBefore(16)).toBe(15);
    });

    it('past maxHeld a seq is not recorded: the server is asked instead, never a wrong yes', () => {
      const l = new HandledLedger(2);
      for (const seq of [3, 4, 5]) l.handled(seq);
      expect(l.size).toBe(2);
      expect(l.gapBefore(6)).toBe(5);
      l.acknowledgedBefore(6);
      expect(l.gapBefore(6)).toBeNull();
    });
  });

  it('Limiter: at most max at once, a released slot goes to the next waiter', async () => {
    const limiter = new Limiter(2);
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 7 }, async () => {
        await limiter.acquire();
        peak = Math.max(peak, ++active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
        limiter.release();
      }),
    );
    expect(peak).toBe(2);
  });
});
