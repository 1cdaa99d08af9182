import { isProjectId } from '@evals/contracts';
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
    if (!isProjectId(input.id)) throw new RangeError('id must be a project id: a-z, 0-9 and -, 1-63 characters, starting with a letter or digit');
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
