import { DEFAULT_PROJECT } from './limits';

/**
 * The bus subjects of spec section 10, defined once: every publisher and consumer imports them from here so
 * a typo is a compile error, not a silent subscription to nothing.
 */
export const SUBJECTS = {
  RUN_REQUESTED: 'evals.run.requested',
  OUTPUT_SUBMITTED: 'evals.output.submitted',
  /** Many outputs of one run in one message (issue 28). */
  OUTPUTS_SUBMITTED: 'evals.outputs.submitted',
  RUN_SEALED: 'evals.run.sealed',
  SESSION_SIGNAL: 'evals.session.signal',
  RESULT_RECORDED: 'evals.result.recorded',
  FINDING_REPORTED: 'finding.reported',
} as const;

export type Subject = (typeof SUBJECTS)[keyof typeof SUBJECTS];

export const ALL_SUBJECTS: readonly Subject[] = Object.values(SUBJECTS);

/** Subjects this service consumes (other teams produce them against our schemas). */
export const INBOUND_SUBJECTS: readonly Subject[] = [
  SUBJECTS.RUN_REQUESTED,
  SUBJECTS.OUTPUT_SUBMITTED,
  SUBJECTS.OUTPUTS_SUBMITTED,
  SUBJECTS.RUN_SEALED,
  SUBJECTS.SESSION_SIGNAL,
];

/** Subjects this service publishes (other teams consume them). */
export const OUTBOUND_SUBJECTS: readonly Subject[] = [SUBJECTS.RESULT_RECORDED, SUBJECTS.FINDING_REPORTED];

/**
 * The wire subject of an outbound message of `project` (issue 30, docs/adr/0009-projects.md): the project is a
 * trailing token, so a consumer of one project filters `finding.reported.<project>` and a consumer of all
 * `finding.>`; `default` keeps the bare subject, so a consumer written before projects sees what it saw.
 */
export function projectSubject(subject: Subject, project: string): string {
  return project === DEFAULT_PROJECT ? subject : `${subject}.${project}`;
}

export function isSubject(value: string): value is Subject {
  return (ALL_SUBJECTS as readonly string[]).includes(value);
}
