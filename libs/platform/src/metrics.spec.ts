import { registry } from './metrics';

describe('unit: metric names (X2)', () => {
  it("the process and Node.js defaults carry the service's prefix once: evals_process_cpu_..., never evals_process_process_...", async () => {
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(['evals_process_cpu_user_seconds_total', 'evals_nodejs_heap_size_total_bytes', 'evals_cases_scored_total']));
    expect(names.filter((n) => /(^|_)(\w+)_\2_/.test(n) || !n.startsWith('evals_'))).toEqual([]);
  });
});
