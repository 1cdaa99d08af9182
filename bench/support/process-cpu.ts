import { readFileSync } from 'node:fs';

/**
 * A process's CPU so far (user + system), in microseconds, from /proc: what the benchmarks read of a
 * PostgreSQL backend's work on this machine (`pg_backend_pid()`). Null when it is not a process here.
 */
export function processCpuUs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
  } catch {
    return null;
  }
}
