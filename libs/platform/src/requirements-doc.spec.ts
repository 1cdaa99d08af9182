/**
 * docs/requirements.md is the index of the product's requirement ids (P1: the repository stands alone, so
 * the ids it cites are listed in it, not only in the product specification). This test keeps it honest:
 *
 * - it has exactly the ids of the specification, once each, in tables of five columns;
 * - every path it names exists in the repository, and is a path of the repository;
 * - every row that is not `open` names an implementation and at least one test file that exists;
 * - every requirement id cited anywhere in the tracked sources is one of its rows, so a mistyped id in a
 *   comment or a test name fails here, with its file and line.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const DOC_PATH = 'docs/requirements.md';

/** The ids of the product specification (sections 1-9, 12-14), each a row of docs/requirements.md. */
const SPEC_IDS: readonly string[] = [
  ...['M1', 'M2'],
  ...['S1', 'S2', 'S3', 'S4', 'S5'],
  ...['V1', 'V2', 'V3'],
  ...['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7'],
  ...['G1', 'G2', 'G3', 'G4', 'G5', 'G6', 'G7', 'G8'],
  'SC1',
  ...['D1', 'D2', 'D3', 'D4'],
  ...['J1', 'J2', 'J3', 'J4', 'J5', 'J6', 'J7', 'J8', 'J9'],
  ...['GT1', 'GT2', 'GT3', 'GT4', 'GT5', 'GT6', 'GT7'],
  ...['X1', 'X2', 'X3', 'X4', 'X5', 'X6'],
  'DOC1',
  'UI1',
  'P1',
];

/**
 * Tokens shaped like a requirement id that are something else. Each needs its reason; a token that no
 * longer occurs in the tree must leave this list (it would hide a future typo of that spelling).
 */
const NOT_REQUIREMENT_IDS: Readonly<Record<string, string>> = {
  // The JavaScript engine of Node (its CPU profiler, its JSON.parse).
  V8: 'the V8 JavaScript engine',
  // The mean of the failing group in the point-biserial formula (M1 - M0) / s_n * sqrt(p q). Its partner
  // M1, the passing group's mean, is spelled like the requirement M1 and resolves to it, harmlessly.
  M0: 'a group mean in the point-biserial formula',
  // A row id of the Pearson table of published reference values in docs/EVAL-METHODOLOGY.md (rows P1, P2;
  // P1 is spelled like the requirement P1 and resolves to it, harmlessly).
  P2: 'a row id of the reference-values table in docs/EVAL-METHODOLOGY.md',
};

// --- parsing docs/requirements.md -----------------------------------------------------------------------

const STATUS = /^(?:done|partial \(issue \d+\)|open \(issue \d+\))$/;
const ID_CELL = /^(?:SC|GT|DOC|UI|[MSVRGDJXP])\d{1,2}$/;
const TEST_FILE = /\.(?:spec|int-spec|e2e-spec)\.ts$/;

interface Entry {
  readonly id: string;
  readonly requirement: string;
  readonly implemented: readonly string[];
  readonly tested: readonly string[];
  readonly status: string;
  readonly line: number;
}

/** The backticked paths of a cell; anything else in it but commas and a lone `-` is an error. */
function pathsOf(cell: string, where: string): string[] {
  const paths = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
  const rest = cell.replace(/`[^`]*`/g, '').replace(/[\s,]/g, '');
  if (!(rest === '' || (rest === '-' && paths.length === 0))) {
    throw new Error(`${where}: a path must be in backticks, or the cell a single "-" (found "${cell}")`);
  }
  return paths;
}

function parseRequirements(markdown: string): Entry[] {
  const entries: Entry[] = [];
  markdown.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!line.startsWith('|')) return;
    const where = `${DOC_PATH}:${index + 1}`;
    if (!line.endsWith('|')) throw new Error(`${where}: a table row must end with "|"`);
    const cells = line.slice(1, -1).split('|').map((c) => c.trim());
    if (cells.length !== 5) throw new Error(`${where}: expected 5 cells (id | requirement | implemented in | tested in | status), found ${cells.length}`);
    const [id = '', requirement = '', implemented = '', tested = '', status = ''] = cells;
    if (id === 'id' || /^-+$/.test(id)) return; // header and separator rows
    if (!ID_CELL.test(id)) throw new Error(`${where}: "${id}" is not a requirement id`);
    if (!STATUS.test(status)) throw new Error(`${where}: status "${status}" is not done, partial (issue N) or open (issue N)`);
    if (requirement.length < 20) throw new Error(`${where}: the requirement of ${id} is missing or too short`);
    entries.push({ id, requirement, implemented: pathsOf(implemented, where), tested: pathsOf(tested, where), status, line: index + 1 });
  });
  return entries;
}

// --- requirement ids in the tree ------------------------------------------------------------------------

/** An id, optionally primed (GT4' is the revision of GT4). */
const ID_TOKEN = /\b(?:SC|GT|DOC|UI|[MSVRGDJXP])\d{1,2}\b'?/g;

/**
 * The id-shaped tokens of one line. A trailing quote is a prime only when it closes neither a quoted id
 * ('G1') nor starts a possessive (V8's).
 */
function idTokens(line: string): string[] {
  const found: string[] = [];
  for (const m of line.matchAll(ID_TOKEN)) {
    let token = m[0];
    if (token.endsWith("'")) {
      const start = m.index ?? 0;
      const end = start + token.length;
      const quoted = line[start - 1] === "'";
      const possessive = /\w/.test(line[end] ?? '');
      if (quoted || possessive) token = token.slice(0, -1);
    }
    found.push(token);
  }
  return found;
}

/** The requirement ids a text cites: its id-shaped tokens minus those known to be something else. */
function citedIds(line: string): string[] {
  return idTokens(line).filter((t) => !(t in NOT_REQUIREMENT_IDS));
}

const SCANNED = /\.(?:ts|js|md|ya?ml|sh)$/;

/** Tracked files that may cite ids: sources, tests, documents, deployment files and scripts. */
function scannedFiles(): string[] {
  let listing: string;
  try {
    listing = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    throw new Error(`git ls-files failed in ${ROOT}: this test reads the tracked files of the repository (${(error as Error).message})`);
  }
  return listing
    .split('\0')
    .filter((f) => f !== '')
    .filter((f) => SCANNED.test(f) || f === '.ci/run')
    .filter((f) => path.basename(f) !== 'package-lock.json') // not ours, and large
    .filter((f) => !f.endsWith('.data.ts')) // generated Unicode tables: hex pairs like D1
    .filter((f) => !f.startsWith('test/fixtures/')) // third-party reference data
    .filter((f) => f !== DOC_PATH) // the index itself
    .filter((f) => fs.existsSync(path.join(ROOT, f))); // deleted in the working tree, not yet committed
}

interface Citation {
  readonly id: string;
  readonly file: string;
  readonly line: number;
}

function citationsIn(file: string, text: string): Citation[] {
  const out: Citation[] = [];
  text.split('\n').forEach((line, index) => {
    for (const id of citedIds(line)) out.push({ id, file, line: index + 1 });
  });
  return out;
}

/** Ids a row answers to: its own, and a primed revision written in its requirement (GT4' in GT4). */
function knownIds(entries: readonly Entry[]): Set<string> {
  const known = new Set<string>();
  for (const e of entries) {
    known.add(e.id);
    if (e.requirement.includes(`${e.id}'`)) known.add(`${e.id}'`);
  }
  return known;
}

function unresolved(citations: readonly Citation[], known: ReadonlySet<string>): string[] {
  return citations.filter((c) => !known.has(c.id)).map((c) => `${c.file}:${c.line}: ${c.id}`);
}

// ---------------------------------------------------------------------------------------------------------

describe('docs/requirements.md (P1: every requirement id cited in the repository is listed there)', () => {
  const entries = parseRequirements(fs.readFileSync(path.join(ROOT, DOC_PATH), 'utf8'));
  const byId = new Map(entries.map((e) => [e.id, e]));

  describe('the document', () => {
    it('has one row per id of the specification, and no other', () => {
      const ids = entries.map((e) => e.id);
      const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
      expect(repeated).toEqual([]);
      expect([...ids].sort()).toEqual([...SPEC_IDS].sort());
    });

    it('names only paths that exist in the repository, written relative to its root', () => {
      const problems: string[] = [];
      for (const e of entries) {
        for (const p of [...e.implemented, ...e.tested]) {
          const resolved = path.resolve(ROOT, p);
          if (path.isAbsolute(p) || p.split(/[\\/]/).includes('..') || !resolved.startsWith(ROOT + path.sep)) {
            problems.push(`${DOC_PATH}:${e.line} ${e.id}: ${p} is not a path inside the repository`);
          } else if (!fs.existsSync(resolved)) {
            problems.push(`${DOC_PATH}:${e.line} ${e.id}: ${p} does not exist`);
          }
        }
      }
      if (problems.length > 0) throw new Error(`paths in ${DOC_PATH} that do not resolve:\n${problems.join('\n')}`);
    });

    it('every row that is not open names its implementation and at least one existing test file', () => {
      const problems: string[] = [];
      for (const e of entries) {
        if (e.status.startsWith('open')) continue;
        if (e.implemented.length === 0) problems.push(`${e.id} (${e.status}) names no implementation`);
        const tests = e.tested.filter((p) => TEST_FILE.test(p) && fs.existsSync(path.join(ROOT, p)));
        if (tests.length === 0) problems.push(`${e.id} (${e.status}) names no existing *.spec.ts, *.int-spec.ts or *.e2e-spec.ts file`);
      }
      if (problems.length > 0) throw new Error(`${DOC_PATH}:\n${problems.join('\n')}`);
    });

    it('keeps the revision GT4\u2032 inside the row of GT4', () => {
      expect(knownIds(entries).has("GT4'")).toBe(true);
      // GT4' (budgets in money) is implemented since issue 13: the row is done, the revision still in it.
      expect(byId.get('GT4')?.status).toBe('done');
    });
  });

  describe('the extractor (so this test cannot pass by finding nothing)', () => {
    it('finds ids, a primed revision, and quoted ids; skips engines, possessives and identifiers', () => {
      expect(citedIds("S4 config is checked (G2, GT4'); DOC1 and SC1 too")).toEqual(['S4', 'G2', "GT4'", 'DOC1', 'SC1']);
      expect(citedIds("const known = ['G1', 'GT6'];")).toEqual(['G1', 'GT6']);
      expect(citedIds("V8's JSON.parse, the V8 profiler, and (M1 - M0)")).toEqual(['M1']);
      expect(idTokens("V8's engine")).toEqual(['V8']);
      expect(citedIds('TEST_R2 G12x xS1 S123 r2 gt1 B2')).toEqual([]);
    });

    it('reports an id that is no row, with its file and line', () => {
      const unknown = 'G' + '99'; // spelled apart so this file cites no such id
      const citations = citationsIn('some/file.ts', `// fine: G2\n// a typo: ${unknown}\n// V8 is no requirement`);
      expect(unresolved(citations, new Set(['G2']))).toEqual([`some/file.ts:2: ${unknown}`]);
    });
  });

  describe('the tracked sources', () => {
    const files = scannedFiles();
    const citations = files.flatMap((f) => citationsIn(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));

    it('reads the sources, docs, deployment files and scripts', () => {
      expect(files.length).toBeGreaterThan(100);
      for (const f of ['README.md', '.ci/run', 'jest.config.js', 'docs/EVAL-METHODOLOGY.md']) expect(files).toContain(f);
      expect(files.some((f) => /\.ya?ml$/.test(f))).toBe(true);
      expect(files).not.toContain(DOC_PATH);
    });

    it('cite many distinct requirement ids', () => {
      const distinct = new Set(citations.map((c) => c.id));
      expect(distinct.size).toBeGreaterThanOrEqual(40);
    });

    it('cite only ids that are rows of docs/requirements.md', () => {
      const missing = unresolved(citations, knownIds(entries));
      if (missing.length > 0) {
        throw new Error(
          `${missing.length} citation(s) of ids that are not in ${DOC_PATH} (a typo, or a token to explain in NOT_REQUIREMENT_IDS):\n${missing.join('\n')}`,
        );
      }
    });

    it('still contain every token the allowlist explains', () => {
      const tokens = new Set(files.flatMap((f) => fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').flatMap(idTokens)));
      expect(Object.keys(NOT_REQUIREMENT_IDS).filter((t) => !tokens.has(t))).toEqual([]);
    });
  });
});
