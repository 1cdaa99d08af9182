/**
 * The published reference values the statistics and calibration tests check against, kept in the
 * repository as fixtures of its own (test/fixtures/reference/README.md says where each comes from). One
 * loader, so no test builds a path of its own to them (P1: nothing outside the repository is read).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REFERENCE_DIR = path.resolve(__dirname, '..', 'fixtures', 'reference');

export type ReferenceFile = 'stats-reference.json' | 'mtbench-calibration.json' | 'judge-calibration-2.json';

export function referencePath(file: ReferenceFile): string {
  return path.join(REFERENCE_DIR, file);
}

/** The parsed fixture; the caller names the element type it expects and checks what it relies on. */
export function readReference<T>(file: ReferenceFile): T {
  return JSON.parse(fs.readFileSync(referencePath(file), 'utf8')) as T;
}
