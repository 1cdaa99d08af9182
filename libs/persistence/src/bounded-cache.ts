/**
 * A Map that forgets its least recently used entries while their total weight (one each by default) is
 * beyond `capacity`; the entry just set is always kept. For facts that never change once written - a run's
 * opening, a suite version (V2) - so a cached value is never stale, only evicted.
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>();
  private total = 0;
  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.total -= this.weigh(old);
    }
    this.map.set(key, value);
    this.total += this.weigh(value);
    while (this.total > this.capacity && this.map.size > 1) {
      const [oldestKey, oldest] = this.map.entries().next().value as [K, V];
      this.map.delete(oldestKey);
      this.total -= this.weigh(oldest);
    }
  }
}
