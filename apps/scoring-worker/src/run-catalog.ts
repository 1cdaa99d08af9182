import { compileSuite, parseRunEvent, RUN_EVENTS, runStreamId, type CompiledSuite, type RunOpenedV1 } from '@evals/domain';
import { EventStore, SuiteRepository, type Sql } from '@evals/persistence';

/**
 * What the worker needs to know about a run before scoring it: its `run.opened` facts and its suite version,
 * compiled. Both are immutable once written (a run is opened once, a suite version never changes - V2),
 * so they are cached in memory, bounded; only what was found is cached.
 */
export class RunCatalog {
  private readonly runs = new BoundedCache<string, RunOpenedV1>(20_000);
  private readonly suites = new BoundedCache<string, CompiledSuite>(64);
  private readonly events = new EventStore();
  private readonly suiteRepository = new SuiteRepository();

  /** The run's `run.opened` data, or null while the run is unknown. */
  async run(sql: Sql, runId: string): Promise<RunOpenedV1 | null> {
    const cached = this.runs.get(runId);
    if (cached) return cached;
    const stream = await this.events.readStream(sql, runStreamId(runId));
    const opened = stream.find((e) => e.type === RUN_EVENTS.opened);
    if (!opened) return null;
    const parsed = parseRunEvent(opened);
    if ('error' in parsed || parsed.type !== 'run.opened') return null;
    this.runs.set(runId, parsed.data);
    return parsed.data;
  }

  /** The compiled suite version, or null when it is not stored. Throws SuiteCompileError when not scorable. */
  async suite(sql: Sql, suiteKey: string, version: number): Promise<CompiledSuite | null> {
    const key = `${suiteKey}\u0000${version}`;
    const cached = this.suites.get(key);
    if (cached) return cached;
    const record = await this.suiteRepository.find(sql, suiteKey, version);
    if (!record) return null;
    const compiled = compileSuite(record);
    this.suites.set(key, compiled);
    return compiled;
  }
}

/** A Map that forgets its least recently used entry beyond `capacity`. */
class BoundedCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }
}
