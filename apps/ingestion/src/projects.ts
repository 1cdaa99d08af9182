import { Inject, Injectable } from '@nestjs/common';
import { DATA_SOURCE } from '@evals/platform';
import { KnownProjects as ProjectDirectory, type Sql } from '@evals/persistence';

/**
 * Which projects exist, for the bus edge (issue 30, docs/adr/0009-projects.md): a message naming a project
 * that is not in the shared `projects` table is dead-lettered PROJECT_NOT_FOUND. The directory remembers
 * found projects only; a lookup that fails throws, so the batch is redelivered, never dead-lettered for it.
 */
@Injectable()
export class KnownProjects {
  private readonly directory = new ProjectDirectory();

  constructor(@Inject(DATA_SOURCE) private readonly db: Sql) {}

  exists(project: string): Promise<boolean> {
    return this.directory.exists(this.db, project);
  }
}
