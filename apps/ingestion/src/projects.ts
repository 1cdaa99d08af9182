import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { DATA_SOURCE } from '@evals/platform';
import type { Sql } from '@evals/persistence';

/** Projects remembered as existing; past this many the oldest is asked again (an id is ~10 bytes). */
const MAX_KNOWN_PROJECTS = 10_000;

/**
 * Which projects exist, for the bus edge (issue 30, docs/adr/0009-projects.md): a message naming a project
 * that is not in the shared `projects` table is dead-lettered PROJECT_NOT_FOUND. Only a positive answer is
 * kept, so a project created a moment ago is seen by its first message; `default` always exists and is
 * never asked. A lookup that fails throws: the batch is redelivered, never dead-lettered for it.
 */
@Injectable()
export class KnownProjects {
  private readonly known = new Set<string>();

  constructor(@Inject(DATA_SOURCE) private readonly db: Sql) {}

  async exists(project: string): Promise<boolean> {
    if (project === DEFAULT_PROJECT || this.known.has(project)) return true;
    const rows: unknown[] = await this.db.query('SELECT 1 FROM projects WHERE id = $1', [project]);
    if (rows.length === 0) return false;
    if (this.known.size >= MAX_KNOWN_PROJECTS) this.known.delete(this.known.values().next().value as string);
    this.known.add(project);
    return true;
  }
}
