import { IsIn } from 'class-validator';
import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import { IsCount, IsNonNegativeNumber, IsSafeId, IsTimestamp, IsToken } from '../validation/constraints';
import type { FieldIssue } from '../validation/dto-validation';

/** Ordered from least to most severe; `none` exactly when a session has no finding. */
export const SEVERITIES = ['none', 'info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * `evals.session.signal` v1: behavioural signals of one sampled real session (D3), from the platform's
 * Session, Finding and CostRecord signals. It carries no output text, by design.
 */
export interface SessionSignalV1 {
  readonly session_id: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  /** The platform's session state, e.g. `completed`, `failed`, `aborted` (a lowercase token). */
  readonly state: string;
  readonly finding_count: number;
  readonly max_severity: Severity;
  readonly tokens_in: number;
  readonly tokens_out: number;
  readonly cost_usd: number;
  readonly occurred_at: string;
}

export class SessionSignalV1Dto implements SessionSignalV1 {
  @IsSafeId()
  session_id!: string;

  @IsToken()
  subject_kind!: string;

  @IsSafeId()
  subject_id!: string;

  @IsToken()
  state!: string;

  @IsCount()
  finding_count!: number;

  @IsIn(SEVERITIES)
  max_severity!: Severity;

  @IsCount()
  tokens_in!: number;

  @IsCount()
  tokens_out!: number;

  @IsNonNegativeNumber()
  cost_usd!: number;

  @IsTimestamp()
  occurred_at!: string;
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const SESSION_SIGNAL_V1_EXAMPLE: SessionSignalV1 = {
  session_id: 'sess-01HZX3K9Q2',
  subject_kind: 'agent',
  subject_id: 'support-bot',
  state: 'completed',
  finding_count: 1,
  max_severity: 'medium',
  tokens_in: 1840,
  tokens_out: 312,
  cost_usd: 0.0123,
  occurred_at: '2025-03-01T12:00:00.000Z',
};

export const SESSION_SIGNAL_V1 = defineMessage({
  type: SUBJECTS.SESSION_SIGNAL,
  version: 1,
  direction: 'inbound',
  dto: SessionSignalV1Dto,
  invariants: (data: SessionSignalV1): FieldIssue[] =>
    (data.finding_count === 0) !== (data.max_severity === 'none')
      ? [{ field: 'max_severity', constraint: 'consistentWithFindingCount' }]
      : [],
  example: SESSION_SIGNAL_V1_EXAMPLE,
});
