import { baseCaseId, monitorCases, monitorEvidenceCaseId, monitorWindow, signalValue, type SessionSignal } from './monitor';

const signal: SessionSignal = {
  session_id: 's-1',
  subject_kind: 'agent',
  subject_id: 'bot',
  state: 'completed',
  finding_count: 2,
  max_severity: 'high',
  tokens_in: 1200,
  tokens_out: 300,
  cost_usd: 0.0125,
  occurred_at: '2026-11-30T10:42:13.000Z',
};

describe('unit: the session monitor (D3)', () => {
  it('reads only behavioural signal fields, as text for the scorers', () => {
    expect(signalValue(signal, 'state')).toBe('completed');
    expect(signalValue(signal, 'cost_usd')).toBe('0.0125');
    expect(signalValue(signal, 'tokens_total')).toBe('1500');
    expect(signalValue(signal, 'max_severity')).toBe('high');
  });

  it('accepts a suite as a monitor suite only when every case names a known signal field', () => {
    expect(monitorCases([{ case_id: 'cost', input: { signal_field: 'cost_usd' } }])).toEqual({ ok: true, cases: [{ case_id: 'cost', field: 'cost_usd' }] });
    expect(monitorCases([{ case_id: 'a', input: { signal_field: 'cost_usd' } }, { case_id: 'b', input: 'what is 2+2?' }, { case_id: 'c', input: { signal_field: 'transcript' } }])).toEqual({ ok: false, invalid: ['b', 'c'] });
  });

  it('groups signals in tumbling windows aligned to the epoch, one run id per suite, subject and window', () => {
    const w = monitorWindow('guard', 'agent', 'bot', signal.occurred_at, 60);
    expect(w).toEqual({ start: '2026-11-30T10:00:00.000Z', end: '2026-11-30T11:00:00.000Z', run_id: 'monitor.guard.agent.bot.20261130T100000Z' });
    expect(monitorWindow('guard', 'agent', 'bot', '2026-11-30T10:59:59.999Z', 60).run_id).toBe(w.run_id);
    expect(monitorWindow('guard', 'agent', 'bot', '2026-11-30T11:00:00.000Z', 60).run_id).not.toBe(w.run_id);
    expect(monitorWindow('guard', 'agent', 'x'.repeat(200), signal.occurred_at, 15).run_id.length).toBeLessThanOrEqual(200);
  });

  it('evidence case ids carry the session, and map back to the suite case', () => {
    const id = monitorEvidenceCaseId('cost', 's-1');
    expect(id).toBe('cost@s-1');
    expect(baseCaseId(id)).toBe('cost');
    expect(baseCaseId('plain')).toBe('plain');
  });
});
