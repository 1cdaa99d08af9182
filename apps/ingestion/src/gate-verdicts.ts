import { Inject, Injectable } from '@nestjs/common';
import { effectiveVerdict, overrideReasonProblem } from '@evals/domain';
import { GateRepository } from '@evals/persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { GateBudget } from './gate-budget';
import { IntakeError } from './intake-error';

export interface Actor {
  readonly key_id: string;
  readonly name: string;
}

/** A gate's verdict as recorded: append-only, never changed afterwards (GT5). */
export interface RecordedGate {
  readonly gate_id: string;
  readonly run_id: string;
  readonly recorded_verdict: 'pass' | 'fail';
  readonly report: Record<string, unknown>;
  readonly recorded_at: string;
}

/**
 * Recorded gate verdicts and their overrides (GT5): the verdict and the judge spend behind it are written
 * in one transaction; an override (admin only - the route says so - with a written reason) is an audited,
 * append-only entry that changes the effective verdict, never the recorded one. A gate belongs to the project
 * it was recorded in (issue 30): another project's gate answers GATE_NOT_FOUND, as a missing one does, and
 * takes no override from it.
 */
@Injectable()
export class GateVerdicts {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly gates: GateRepository,
    private readonly budgets: GateBudget,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * The verdict, and the judge spend (GT4: recorded after the judge calls, in our own append-only ledger, with
   * the model pin and the suite, so every budget scope's spent amount follows from it - issue 13).
   */
  async record(project: string, gate: RecordedGate, spend?: { readonly amount_usd: number; readonly judge_model: string | null; readonly suite_key: string }): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.gates.record(tx, project, gate);
      if (spend) await this.budgets.record(tx, project, { gate_id: gate.gate_id, ...spend });
    });
  }

  /** `GET /v1/gate/:id`: the report with both verdicts and the override audit. */
  async status(project: string, gateId: string): Promise<Record<string, unknown>> {
    const found = await this.gates.find(this.db, project, gateId);
    if (!found) throw gateNotFound(gateId);
    const effective = effectiveVerdict(found.recorded_verdict, found.overrides);
    const last = found.overrides[found.overrides.length - 1] ?? null;
    return { ...found.report, recorded_verdict: found.recorded_verdict, effective_verdict: effective, override: last, overrides: found.overrides };
  }

  /** GT5: a written reason, audited (who, when, why, before and after); the recorded verdict never changes. */
  async override(project: string, gateId: string, reason: unknown, actor: Actor): Promise<Record<string, unknown>> {
    const problem = overrideReasonProblem(reason);
    if (problem) throw new IntakeError('INVALID_REQUEST', problem, 'reason');
    const found = await this.gates.find(this.db, project, gateId);
    if (!found) throw gateNotFound(gateId);
    const before = effectiveVerdict(found.recorded_verdict, found.overrides);
    if (before === 'pass') throw new IntakeError('NOTHING_TO_OVERRIDE', `gate ${gateId} already passes`, 'id');
    const added = await this.gates.addOverride(this.db, project, gateId, { actor_key_id: actor.key_id, actor_name: actor.name, reason: (reason as string).trim(), before, after: 'pass', at: this.clock.now().toISOString() });
    if (!added) throw gateNotFound(gateId);
    return this.status(project, gateId);
  }
}

/** A gate that is not there - or is another project's (issue 30): the same answer, naming only the id sent. */
function gateNotFound(gateId: string): IntakeError {
  return new IntakeError('GATE_NOT_FOUND', `no gate ${gateId}`, 'id');
}
