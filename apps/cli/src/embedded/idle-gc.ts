import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

/**
 * Gives a burst's garbage back once `evals serve` goes idle (issue 15). A 10 000-case run leaves 100-200 MB
 * of dead objects in V8's old generation, and V8 collects them only when the generation reaches its next
 * limit, which it sets from the live size and the allocation rate - so a server that has just finished its
 * runs stays at 550-700 MiB while it waits, with 80 MB of it live. When the event loop has been idle for a
 * whole interval and the heap has grown by `growthBytes` since the last collection, one full collection
 * runs: a few tens of milliseconds nobody waits for, and the resident memory falls back towards the live
 * size. Never during work: a busy interval resets nothing and collects nothing.
 */
export interface IdleCollectorOptions {
  readonly intervalMs?: number;
  readonly growthBytes?: number;
  /** Busy share of the event loop over the interval below which it counts as idle. */
  readonly idleBelow?: number;
}

export interface IdleCollectorProbe {
  /** Live-and-dead bytes in the V8 heap now. */
  readonly heapUsed: () => number;
  /** Share of the last interval the event loop was busy, 0..1. */
  readonly busyShare: () => number;
  readonly collect: () => void;
}

/** The decision alone, for the tests: collect when idle and grown. */
export function shouldCollect(state: { heapUsed: number; baseline: number; busyShare: number }, options: Required<IdleCollectorOptions>): boolean {
  return state.busyShare < options.idleBelow && state.heapUsed - state.baseline >= options.growthBytes;
}

// 16 MiB, not more: after ten 10 000-case runs a serve held 104 MiB of heap with 59 live - 45 MiB of garbage,
// under the 48 MiB this waited for, so it sat at 391-420 MiB resident; now 323-352 (issue 15, docs/benchmarks.md).
const DEFAULTS: Required<IdleCollectorOptions> = { intervalMs: 500, growthBytes: 16 * 1024 * 1024, idleBelow: 0.05 };

/** Checks once per interval (an unref'd timer: it never keeps the process alive). Returns a stop function. */
export function startIdleCollector(options: IdleCollectorOptions = {}, probe: IdleCollectorProbe | null = processProbe()): () => void {
  if (probe === null) return () => undefined;
  const o = { ...DEFAULTS, ...options };
  let baseline = probe.heapUsed();
  const timer = setInterval(() => {
    const heapUsed = probe.heapUsed();
    if (shouldCollect({ heapUsed, baseline, busyShare: probe.busyShare() }, o)) {
      probe.collect();
      baseline = probe.heapUsed();
    } else if (heapUsed < baseline) {
      // V8 collected on its own: measure growth from there.
      baseline = heapUsed;
    }
  }, o.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** This process: V8's heap statistics, the event loop's utilisation, and a full collection. */
function processProbe(): IdleCollectorProbe | null {
  const collect = exposedGc();
  if (collect === null) return null;
  let last = performance.eventLoopUtilization();
  return {
    heapUsed: () => v8.getHeapStatistics().used_heap_size,
    busyShare: () => {
      const now = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return share;
    },
    // Twice: after one full collection V8 kept its heap's pages (139 MiB committed, 60 used); a second one,
    // finding the young generation empty, gave them back (96-100 MiB committed) - about 45 MiB resident.
    collect: () => {
      collect();
      collect();
    },
  };
}

/**
 * V8's `gc()` without starting node with --expose-gc: the flag is read when a context is created, so it is
 * raised for one new context, whose `gc` is taken, and lowered again. Null if the runtime refuses.
 */
export function exposedGc(): (() => void) | null {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return existing as () => void;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}
