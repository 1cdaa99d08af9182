import { createHash } from 'node:crypto';

/**
 * The session monitor (D3): sampled real sessions are scored on their behavioural signals only - state,
 * finding count, highest severity, tokens and cost - never on any text. A monitor suite is an ordinary
 * suite whose every case names the signal field it reads in its `input` (`{signal_field: cost_usd}`) and
 * scores that field's value, rendered as text, with any deterministic scorer (numeric_range on cost_usd,
 * exact on state, ...).
 *
 * Signals are grouped into one run per monitor suite, subject and tumbling time window; docs/monitor.md.
 */
export const SIGNAL_FIELDS = ['state', 'finding_count', 'max_severity', 'tokens_in', 'tokens_out', 'tokens_total', 'cost_usd'] as const;
export type SignalField = (typeof SIGNAL_FIELDS)[number];

export interface SessionSignal {
  readonly session_id: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly state: string;
  readonly finding_count: number;
  readonly max_severity: string;
  readonly tokens_in: number;
  readonly tokens_out: number;
  readonly cost_usd: number;
  readonly occurred_at: string;
}

export interface MonitorCase {
  readonly case_id: string;
  readonly field: SignalField;
}

/** The signal field each case reads, or the cases that do not name one (the suite is then no monitor suite). */
export function monitorCases(cases: ReadonlyArray<{ case_id: string; input: unknown }>): { ok: true; cases: MonitorCase[] } | { ok: false; invalid: string[] } {
  const out: MonitorCase[] = [];
  const invalid: string[] = [];
  for (const c of cases) {
    const field = (c.input as { signal_field?: unknown } | null)?.signal_field;
    if (typeof field === 'string' && (SIGNAL_FIELDS as readonly string[]).includes(field)) out.push({ case_id: c.case_id, field: field as SignalField });
    else invalid.push(c.case_id);
  }
  return invalid.length === 0 && out.length > 0 ? { ok: true, cases: out } : { ok: false, invalid };
}

/** The text a scorer sees for a field: numbers in their shortest round-trip form, tokens as they are. */
export function signalValue(signal: SessionSignal, field: SignalField): string {
  switch (field) {
    case 'tokens_total':
      return String(signal.tokens_in + signal.tokens_out);
    case 'state':
    case 'max_severity':
      return signal[field];
    default:
      return String(signal[field]);
  }
}

/** Separates a monitor evidence case id `<case>@<session>` into its parts. */
export const MONITOR_CASE_SEPARATOR = '@';

export function monitorEvidenceCaseId(caseId: string, sessionId: string): string {
  return `${caseId}${MONITOR_CASE_SEPARATOR}${sessionId}`;
}

export function baseCaseId(evidenceCaseId: string): string {
  const at = evidenceCaseId.indexOf(MONITOR_CASE_SEPARATOR);
  return at < 0 ? evidenceCaseId : evidenceCaseId.slice(0, at);
}

export interface MonitorWindow {
  readonly start: string;
  readonly end: string;
  readonly run_id: string;
}

/**
 * Tumbling windows aligned to the epoch: [floor(t / W) * W, + W). The run id is derived from the suite,
 * the subject and the window start, so every ingestion process puts a signal in the same run.
 */
export function monitorWindow(suiteKey: string, subjectKind: string, subjectId: string, occurredAt: string, windowMinutes: number): MonitorWindow {
  const width = windowMinutes * 60_000;
  const t = Date.parse(occurredAt);
  const start = Math.floor(t / width) * width;
  const startIso = new Date(start).toISOString();
  const stamp = startIso.replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
  let runId = `monitor.${suiteKey}.${subjectKind}.${subjectId}.${stamp}`;
  if (runId.length > 200) {
    runId = `monitor.${createHash('sha256').update(`${suiteKey}\n${subjectKind}\n${subjectId}`).digest('hex').slice(0, 32)}.${stamp}`;
  }
  return { start: startIso, end: new Date(start + width).toISOString(), run_id: runId };
}
