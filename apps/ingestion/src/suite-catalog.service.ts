import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { nextSuiteVersion, suiteContentHash, type SuiteDefinition } from '@evals/domain';
import { PG_UNIQUE_VIOLATION, pgCode, SuiteRepository, type Page, type SuiteSummary, type SuiteVersionRecord, type SuiteVersionWithCases } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';

export interface PushResult {
  /** False when the content equals the latest version (V2: idempotent push). */
  readonly created: boolean;
  readonly version: SuiteVersionRecord;
  /** Set when the pushed content equals an older version: this push is a revert. */
  readonly same_content_as?: number;
}

/**
 * Suite versions (V1-V3): validated before they reach here (S4), hashed canonically, versioned by the pure
 * rule of libs/domain, stored append-only. Two concurrent pushes that mint the same number collide on the
 * primary key; the loser decides again against what the winner wrote.
 */
@Injectable()
export class SuiteCatalogService {
  private readonly suites = new SuiteRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  /**
   * A push of a suite text (YAML, or JSON sent as text). Bytes already accepted whose version is still the
   * latest of its key are answered as an identical push (created: false, that version) without `parse`:
   * the bytes determine the key and the content, and a stored version never changes (V2; docs/suites.md,
   * "Pushing the same file again"). Anything else - unknown bytes, or a newer version since (a revert) -
   * is parsed and pushed as usual, and the bytes are recorded against the version they became.
   */
  async pushText(text: string, parse: (text: string) => SuiteDefinition): Promise<PushResult> {
    const source = createHash('sha256').update(text, 'utf8').digest('hex');
    const known = await this.suites.latestBySource(this.db, source);
    if (known) return { created: false, version: known };
    return this.push(parse(text), source);
  }

  /** `source`: the SHA-256 of the text the suite was read from, recorded with the version it becomes. */
  async push(suite: SuiteDefinition, source?: string): Promise<PushResult> {
    const hash = suiteContentHash(suite);
    for (let attempt = 0; ; attempt++) {
      const existing = await this.suites.versions(this.db, suite.key);
      const decision = nextSuiteVersion(existing, hash);
      if (decision.kind === 'existing') {
        if (source !== undefined) await this.suites.recordSource(this.db, source, suite.key, decision.version);
        return { created: false, version: existing.find((v) => v.version === decision.version)! };
      }
      const record: SuiteVersionWithCases = {
        suite_key: suite.key,
        version: decision.version,
        content_hash: hash,
        description: suite.description ?? null,
        default_scorer: suite.default_scorer,
        pass_threshold: suite.pass_threshold,
        regression_threshold: suite.regression_threshold,
        golden_fixtures: suite.golden_fixtures,
        case_count: suite.cases.length,
        cases: suite.cases.map((c) => ({ case_id: c.id, input: c.input, expected: c.expected, scorer: c.scorer ?? null, tags: c.tags })),
      };
      try {
        await this.db.transaction(async (m) => {
          await this.suites.insert(m, record);
          if (source !== undefined) await this.suites.recordSource(m, source, record.suite_key, record.version);
        });
      } catch (error) {
        if (pgCode(error) === PG_UNIQUE_VIOLATION && attempt < 5) continue;
        throw error;
      }
      const stored = (await this.suites.versions(this.db, suite.key)).find((v) => v.version === decision.version)!;
      return { created: true, version: stored, ...(decision.same_content_as ? { same_content_as: decision.same_content_as } : {}) };
    }
  }

  list(offset: number, limit: number): Promise<Page<SuiteSummary>> {
    return this.suites.list(this.db, offset, limit);
  }

  find(key: string, version?: number): Promise<SuiteVersionWithCases | null> {
    return this.suites.find(this.db, key, version);
  }
}
