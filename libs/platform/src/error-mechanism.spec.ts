import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * One error mechanism (X6, docs/http-api.md): apps and libs refuse a request with an ApiError (a code the
 * catalogue maps to a status), never with Nest's HttpException and an inline status.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  // Its refusals carry fields of their own (retry_after_seconds, required_tier); their codes are in the catalogue.
  'libs/platform/src/auth/auth.guard.ts': 'the access guard',
};

/** `git grep`, whose exit status 1 means "no match". */
function grep(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch (error) {
    if ((error as { status?: number }).status === 1) return '';
    throw error;
  }
}

describe('unit: one error mechanism in every app', () => {
  it('no HttpException, NotFoundException or BadRequestException is thrown outside the allowed places', () => {
    const out = grep(['grep', '--untracked', '-n', '-E', 'new (HttpException|NotFoundException|BadRequestException|UnprocessableEntityException|ConflictException)\\(', '--', 'apps/*.ts', 'libs/*.ts', ':!*.spec.ts', ':!*.int-spec.ts', ':!*.testing.ts']);
    const offenders = out
      .split('\n')
      .filter(Boolean)
      .filter((line) => !(line.split(':')[0]! in ALLOWED));
    expect(offenders).toEqual([]);
  });
});
