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

  describe('HandledLedger (issue 28: a seal asks the ack floor only about what this process did not handle)', () => {
    /** A server floor: every message up to `acked` acknowledged; records each question. */
    function server(acked = 0) {
      const asked: number[] = [];
      const floor = {
        acked,
        allAcknowledgedBefore: async (seq: number) => (asked.push(seq), seq - 1 <= floor.acked),
      };
      return { floor, asked };
    }

    it('what this process handled needs no question; a gap is asked about up to the gap only', async () => {
      const { floor, asked } = server(0);
      const l = new HandledLedger(floor);
      for (const seq of [1, 2, 3, 5, 6]) l.handled(seq);
      await expect(l.allHandledBefore(4)).resolves.toBe(true);
      expect(asked).toEqual([]);
      // 4 is another process's, still unacknowledged: the server is asked about everything before 5.
      await expect(l.allHandledBefore(7)).resolves.toBe(false);
      expect(asked).toEqual([5]);
      // 4 is acknowledged now, but 7 was not seen here: asked about everything before 8, where the floor stops at 7.
      floor.acked = 4;
      l.handled(8);
      await expect(l.allHandledBefore(9)).resolves.toBe(false);
      expect(asked).toEqual([5, 8]);
      // 7 arrives (a seal: handled at once, though the server will not see it acknowledged for a while).
      l.handled(7);
      await expect(l.allHandledBefore(9)).resolves.toBe(true);
      expect(asked).toEqual([5, 8, 5]);
      // The server's answer is remembered: the prefix now reaches 8 and nothing is held.
      await expect(l.allHandledBefore(9)).resolves.toBe(true);
      expect(asked).toEqual([5, 8, 5]);
      expect(l.size).toBe(0);
    });

    it('a new process knows nothing below its first message: its first seal asks once, the next ones not', async () => {
      const { floor, asked } = server(10);
      const l = new HandledLedger(floor);
      for (const seq of [11, 12, 14]) l.handled(seq);
      await expect(l.allHandledBefore(13)).resolves.toBe(true);
      expect(asked).toEqual([11]);
      await expect(l.allHandledBefore(14)).resolves.toBe(false);
      expect(asked).toEqual([11, 14]);
      l.handled(13);
      await expect(l.allHandledBefore(15)).resolves.toBe(true);
      expect(asked).toEqual([11, 14]);
      expect(l.size).toBe(0);
    });

    it('past maxHeld a seq is not recorded: the server is asked instead, never a wrong yes', async () => {
      const { floor, asked } = server(0);
      const l = new HandledLedger(floor, 2);
      for (const seq of [3, 4, 5]) l.handled(seq);
      expect(l.size).toBe(2);
      floor.acked = 2;
      await expect(l.allHandledBefore(6)).resolves.toBe(false);
      expect(asked).toEqual([6]);
      floor.acked = 5;
      await expect(l.allHandledBefore(6)).resolves.toBe(true);
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
