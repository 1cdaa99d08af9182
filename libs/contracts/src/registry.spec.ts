import { findDefinition, MESSAGE_DEFINITIONS, versionsOf } from './registry';
import { ALL_SUBJECTS, INBOUND_SUBJECTS, isSubject, OUTBOUND_SUBJECTS, SUBJECTS } from './subjects';

describe('subjects and registry', () => {
  it('defines exactly the six subjects of spec section 10, and the batch of outputs (issue 28)', () => {
    expect([...ALL_SUBJECTS].sort()).toEqual(
      [
        'evals.run.requested',
        'evals.output.submitted',
        'evals.outputs.submitted',
        'evals.run.sealed',
        'evals.session.signal',
        'evals.result.recorded',
        'finding.reported',
      ].sort(),
    );
    expect([...INBOUND_SUBJECTS, ...OUTBOUND_SUBJECTS].sort()).toEqual([...ALL_SUBJECTS].sort());
    expect(isSubject('finding.reported')).toBe(true);
    expect(isSubject('finding.reported.v1')).toBe(false);
  });

  it('has a v1 for every subject, its type equal to the subject', () => {
    for (const subject of ALL_SUBJECTS) expect(versionsOf(subject)).toEqual([1]);
  });

  it('names every schema type.vVersion, once, with the direction of its subject', () => {
    const schemas = MESSAGE_DEFINITIONS.map((d) => d.schema);
    expect(new Set(schemas).size).toBe(schemas.length);
    for (const d of MESSAGE_DEFINITIONS) {
      expect(d.schema).toBe(`${d.type}.v${d.version}`);
      expect(findDefinition(d.schema)).toBe(d);
      const inbound = (INBOUND_SUBJECTS as readonly string[]).includes(d.type);
      expect(d.direction).toBe(inbound ? 'inbound' : 'outbound');
    }
    expect(findDefinition(`${SUBJECTS.RUN_SEALED}.v9`)).toBeUndefined();
  });
});
