export { MONITOR_CASE_SEPARATOR, SIGNAL_FIELDS, baseCaseId, monitorCases, monitorEvidenceCaseId, monitorWindow, signalValue } from './monitor';
export type { MonitorCase, MonitorWindow, SessionSignal, SignalField } from './monitor';
