import { Coalescer } from './coalescer';

describe('unit: Coalescer (issue 28)', () => {
  it('items submitted in one turn are handled as one group, in order, at most `max` at a time', async () => {
    const groups: number[][] = [];
    const c = new Coalescer<number, number>(async (items) => {
      groups.push([...items]);
      return items.map((i) => ({ ok: true as const, value: i * 10 }));
    }, 3);
    const values = await Promise.all([1, 2, 3, 4, 5].map((i) => c.submit(i)));
    expect(values).toEqual([10, 20, 30, 40, 50]);
    expect(groups).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(c.groups).toBe(2);
  });

  it('items submitted while a group is handled wait for the next group, never run beside it', async () => {
    let active = 0;
    let most = 0;
    const groups: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const c = new Coalescer<string, string>(async (items) => {
      active++;
      most = Math.max(most, active);
      groups.push([...items]);
      if (items[0] === 'a') await gate;
      active--;
      return items.map((i) => ({ ok: true as const, value: i }));
    }, 10);
    const first = c.submit('a');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [c.submit('b'), c.submit('c')];
    release();
    expect(await Promise.all([first, ...later])).toEqual(['a', 'b', 'c']);
    expect(groups).toEqual([['a'], ['b', 'c']]);
    expect(most).toBe(1);
  });

  it("one item's error is that item's; a group that throws fails each of its items, and the next group still runs", async () => {
    const c = new Coalescer<number, number>(async (items) => {
      if (items.includes(99)) throw new Error('group failed');
      return items.map((i) => (i < 0 ? { ok: false as const, error: new Error(`refused ${i}`) } : { ok: true as const, value: i }));
    }, 2);
    const settled = await Promise.allSettled([c.submit(1), c.submit(-2), c.submit(99), c.submit(4), c.submit(5)]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([1, 'refused -2', 'group failed', 'group failed', 5]);
  });

  it('a handler that answers the wrong number of outcomes fails the group rather than leaving a caller waiting', async () => {
    const c = new Coalescer<number, number>(async () => [], 4);
    await expect(c.submit(1)).rejects.toThrow('a group of 1 answered 0 outcomes');
  });
});
