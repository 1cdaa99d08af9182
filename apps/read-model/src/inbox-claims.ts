import type { RunReadModelRepository, Sql } from '@evals/persistence';

/** Another process claimed an event of this batch after the batch looked: roll back, and the redelivery finds it applied. */
export class InboxClaimRace extends Error {
  readonly code = 'INBOX_CLAIM_RACE';
  constructor(readonly lost: number) {
    super(`${lost} event(s) of the batch were claimed by another process meanwhile`);
  }
}

/**
 * The projection's inbox claims for one micro-batch (issue 28). Asked event by event - was this one applied
 * already? - but answered from one read of the inbox for the batch's own events, and written in one statement
 * at the end, where each claim was one statement before. The inbox stays the arbiter: a claim another process
 * made after the read makes `commit` throw InboxClaimRace, which rolls the batch back (nothing was applied
 * twice) and redelivers it. The read covers the batch's events and those of the log the batch foresaw
 * applying ahead of their delivery (the projector's catch-up); an event met outside both is claimed at once,
 * as before.
 */
export class InboxClaims {
  private readonly fresh = new Map<string, number>();

  private constructor(
    private readonly repo: RunReadModelRepository,
    private readonly projection: string,
    /** The batch's events, and which of them were claimed already when the batch read the inbox. */
    private readonly looked: ReadonlySet<string>,
    private readonly claimed: Set<string>,
  ) {}

  /** `messageIds`: the events the batch may claim, each checked (a uuid); repeats are fine. */
  static async read(sql: Sql, repo: RunReadModelRepository, projection: string, messageIds: readonly string[]): Promise<InboxClaims> {
    return new InboxClaims(repo, projection, new Set(messageIds), await repo.claimedAlready(sql, projection, messageIds));
  }

  /** Claims the event for this batch; false when it was applied already (before this batch or earlier in it). */
  async claim(sql: Sql, messageId: string, position: number): Promise<boolean> {
    if (this.claimed.has(messageId) || this.fresh.has(messageId)) return false;
    if (!this.looked.has(messageId)) {
      const ok = await this.repo.claim(sql, this.projection, messageId, position);
      if (ok) this.claimed.add(messageId);
      return ok;
    }
    this.fresh.set(messageId, position);
    return true;
  }

  /** Writes the batch's claims; throws InboxClaimRace when any of them was taken meanwhile. */
  async commit(sql: Sql): Promise<void> {
    const claims = [...this.fresh].map(([message_id, position]) => ({ message_id, position }));
    const written = await this.repo.claimAll(sql, this.projection, claims);
    if (written < claims.length) throw new InboxClaimRace(claims.length - written);
  }
}
