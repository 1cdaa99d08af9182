import { DEFAULT_PROJECT, isProjectId, PROJECT_ID_RULE } from '@evals/contracts';
import type { Sql } from './sql';

/** A project (issue 30, docs/adr/0009-projects.md): what every key, suite, run and message belongs to. */
export interface ProjectRecord {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly created_by: string | null;
}

export const PROJECT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._@:/+-]{0,99}$/;

const COLUMNS = `id, name, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, created_by`;

/** The shared `projects` table. A project is never renamed or deleted: its id is in every row it owns. */
export class ProjectRepository {
  /** Creates a project; null when the id is taken (the caller answers the conflict). */
  async create(sql: Sql, input: { id: string; name: string; createdBy?: string | null }): Promise<ProjectRecord | null> {
    if (!isProjectId(input.id)) throw new RangeError(`id: ${PROJECT_ID_RULE}`);
    if (!PROJECT_NAME_PATTERN.test(input.name)) throw new RangeError('name must be 1-100 characters: letters, digits, space and ._@:/+-');
    const rows = await sql.query(
      `INSERT INTO projects (id, name, created_by) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
      [input.id, input.name, input.createdBy ?? null],
    );
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  async find(sql: Sql, id: string): Promise<ProjectRecord | null> {
    if (!isProjectId(id)) return null;
    const rows = await sql.query(`SELECT ${COLUMNS} FROM projects WHERE id = $1`, [id]);
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  /** Every project, oldest first. */
  async list(sql: Sql): Promise<ProjectRecord[]> {
    return (await sql.query(`SELECT ${COLUMNS} FROM projects ORDER BY created_at, id`)).map(toRecord);
  }
}

function toRecord(row: Record<string, unknown>): ProjectRecord {
  return { id: String(row.id), name: String(row.name), created_at: String(row.created_at), created_by: row.created_by == null ? null : String(row.created_by) };
}

/** Projects remembered as existing; past this many the oldest is asked again (an id is ~10 bytes). */
const MAX_KNOWN_PROJECTS = 10_000;

/**
 * Which projects exist, asked by the HTTP guard for a platform key's header and by the bus edge for a
 * message's `metadata.project` (issue 30). Only found projects are remembered - a project is never deleted,
 * so a found one stays found, and one created a moment ago is seen by its first request. `default` always
 * exists and is never asked. A lookup that fails throws (the request fails, the message is redelivered).
 */
export class KnownProjects {
  private readonly known = new Map<string, ProjectRecord>();

  constructor(private readonly repo = new ProjectRepository()) {}

  async find(sql: Sql, id: string): Promise<ProjectRecord | null> {
    const hit = this.known.get(id);
    if (hit) return hit;
    const found = await this.repo.find(sql, id);
    if (found) {
      if (this.known.size >= MAX_KNOWN_PROJECTS) this.known.delete(this.known.keys().next().value as string);
      this.known.set(id, found);
    }
    return found;
  }

  async exists(sql: Sql, id: string): Promise<boolean> {
    return id === DEFAULT_PROJECT || (await this.find(sql, id)) !== null;
  }
}
