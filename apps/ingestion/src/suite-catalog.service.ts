import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { nextSuiteVersion, streamSuiteYaml, suiteContentHash, type SuiteCase, type SuiteDefinition, type SuiteError, type SuiteHead } from '@evals/domain';
import { PG_UNIQUE_VIOLATION, pgCode, SuiteRepository, type Page, type SuiteCaseRecord, type SuiteSummary, type SuiteVersionRecord, type SuiteVersionWithCases } from '@evals/persistence';
import { projectField } from '@evals/contracts';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource, EntityManager } from 'typeorm';

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
 * primary key; the loser decides again against what the winner wrote. Every method takes the request's
 * project (issue 30): a suite key is unique per project, so the same key in two projects is two suites.
 */
@Injectable()
export class SuiteCatalogService {
  private readonly suites = new SuiteRepository();
  /** Texts up to this many characters are read once, their cases kept until written (pushYaml); larger ones twice, a slice at a time. */
  onePassMaxChars = ONE_PASS_MAX_CHARS;

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  /**
   * A push of a suite text (YAML, or JSON sent as text). Bytes already accepted whose version is still the
   * latest of its key are answered as an identical push (created: false, that version) without `parse`:
   * the bytes determine the key and the content, and a stored version never changes (V2; docs/suites.md,
   * "Pushing the same file again"). Anything else - unknown bytes, or a newer version since (a revert) -
   * is parsed and pushed as usual, and the bytes are recorded against the version they became.
   */
  async pushText(project: string, text: string, parse: (text: string) => SuiteDefinition): Promise<PushResult> {
    const source = createHash('sha256').update(text, 'utf8').digest('hex');
    const known = await this.suites.latestBySource(this.db, project, source);
    if (known) return { created: false, version: known };
    return this.push(project, parse(text), source);
  }

  /**
   * pushText for a YAML (or JSON) text without holding the suite (issue 31): a first pass validates and
   * hashes it slice by slice (streamSuiteYaml), keeping ids and hashes, never the cases; the version is then
   * decided as for any push, and a second pass writes the cases one slice at a time in the version's
   * transaction. Memory is a slice's, for twice the parse time of a new version; a refused suite costs one pass.
   * A small text is read once (ONE_PASS_MAX_CHARS).
   */
  async pushYaml(project: string, text: string, fileName: string, refused: (errors: readonly SuiteError[]) => Error): Promise<PushResult> {
    const source = createHash('sha256').update(text, 'utf8').digest('hex');
    const known = await this.suites.latestBySource(this.db, project, source);
    if (known) return { created: false, version: known };
    // A text up to ONE_PASS_MAX_CHARS keeps its validated cases from the one reading (about ten times its size
    // at most: tens of megabytes), saving the second parse - a fifth of a cold 10 000-case `evals run`.
    let kept: SuiteCaseRecord[] | undefined = text.length <= this.onePassMaxChars ? [] : undefined;
    const checked = await streamSuiteYaml(text, fileName, kept && ((cases) => void kept!.push(...cases.map(caseRecord)))).catch(() => {
      // A slice refused alone in a valid text, after cases were kept: read it again without keeping them.
      kept = undefined;
      return streamSuiteYaml(text, fileName);
    });
    if (!checked.ok) throw refused(checked.errors);
    const { head, content_hash, case_count } = checked;
    const one = kept;
    if (one) return this.store(project, head, content_hash, case_count, source, (m, version) => this.suites.insertCases(m, project, head.key, version, one, 0));
    return this.store(project, head, content_hash, case_count, source, async (m, version) => {
      const stored = await streamSuiteYaml(text, fileName, (cases, from) => this.suites.insertCases(m, project, head.key, version, cases.map(caseRecord), from), { whole: checked.read === 'whole' });
      // The same text read the same way: anything else is a bug, and the transaction must not commit.
      if (!stored.ok || stored.content_hash !== content_hash) throw new Error('suite push: the second reading of the text differs from the first');
    });
  }

  /** `source`: the SHA-256 of the text the suite was read from, recorded with the version it becomes. */
  async push(project: string, suite: SuiteDefinition, source?: string): Promise<PushResult> {
    const { cases, ...head } = suite;
    return this.store(project, head, suiteContentHash(suite), cases.length, source, (m, version) => this.suites.insertCases(m, project, suite.key, version, cases.map(caseRecord), 0));
  }

  private async store(project: string, head: SuiteHead, hash: string, caseCount: number, source: string | undefined, writeCases: (m: EntityManager, version: number) => Promise<void>): Promise<PushResult> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.suites.versions(this.db, project, head.key);
      const decision = nextSuiteVersion(existing, hash);
      if (decision.kind === 'existing') {
        if (source !== undefined) await this.suites.recordSource(this.db, project, source, head.key, decision.version);
        return { created: false, version: existing.find((v) => v.version === decision.version)! };
      }
      const record: SuiteVersionRecord = {
        ...projectField(project),
        suite_key: head.key,
        version: decision.version,
        content_hash: hash,
        description: head.description ?? null,
        default_scorer: head.default_scorer,
        pass_threshold: head.pass_threshold,
        regression_threshold: head.regression_threshold,
        golden_fixtures: head.golden_fixtures,
        case_count: caseCount,
      };
      try {
        await this.db.transaction(async (m) => {
          await this.suites.insertHead(m, record);
          await writeCases(m, record.version);
          if (source !== undefined) await this.suites.recordSource(m, project, source, record.suite_key, record.version);
        });
      } catch (error) {
        if (pgCode(error) === PG_UNIQUE_VIOLATION && attempt < 5) continue;
        throw error;
      }
      const stored = (await this.suites.versions(this.db, project, head.key)).find((v) => v.version === decision.version)!;
      return { created: true, version: stored, ...(decision.same_content_as ? { same_content_as: decision.same_content_as } : {}) };
    }
  }

  list(project: string, offset: number, limit: number): Promise<Page<SuiteSummary>> {
    return this.suites.list(this.db, project, offset, limit);
  }

  find(project: string, key: string, version?: number): Promise<SuiteVersionWithCases | null> {
    return this.suites.find(this.db, project, key, version);
  }
}

/** Texts up to this many characters are read once, their cases kept until they are written (pushYaml). */
const ONE_PASS_MAX_CHARS = 2 * 1024 * 1024;

function caseRecord(c: SuiteCase): SuiteCaseRecord {
  return { case_id: c.id, input: c.input, expected: c.expected, scorer: c.scorer ?? null, tags: c.tags };
}
