import { isProjectId, PROJECT_ID_PATTERN } from '@evals/limits';
import { UsageError } from './exit-codes';

/**
 * Issue 30 (docs/adr/0009-projects.md): the project a command acts in, from `--project` or EVALS_PROJECT.
 * An id that cannot be a project is refused here (exit 2) before anything is sent: the server would only
 * answer 404 PROJECT_NOT_FOUND, which does not say the id itself is malformed. Kept apart from http.ts so
 * that cli.ts checks a `--project` before the command without loading the HTTP client.
 */
export function checkProjectId(value: string, source: string): string {
  if (!isProjectId(value)) {
    throw new UsageError(`${source} is not a project id: 1 to 63 lowercase letters, digits and -, starting with a letter or digit (${PROJECT_ID_PATTERN.source})`);
  }
  return value;
}
