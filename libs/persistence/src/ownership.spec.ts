import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EMBEDDED_SEARCH_PATH } from '@evals/pglite';
import { APPS, FOREIGN_READS, TABLE_OWNERS, deploymentSchemas, schemaUsageOf, tableSchema, type AppName, type TableName } from './ownership';

/**
 * Issue 27: no app's code uses a repository or a query of another app's tables beyond the reads
 * FOREIGN_READS lists, and it writes none. Read from the sources: each export of libs/persistence is
 * mapped to the tables its SQL names (and those of the exports it calls), each app to the exports it
 * imports and the SQL of its own; the grants (ownership.int-spec.ts) then make the same rule bite at run time.
 */
const ROOT = join(__dirname, '..', '..', '..');
const TABLES = Object.keys(TABLE_OWNERS) as TableName[];
const APP_DIRS: Record<string, AppName> = { ingestion: 'ingestion', 'scoring-worker': 'scoring', regression: 'regression', 'read-model': 'read_model' };

const isSource = (file: string) => file.endsWith('.ts') && !/\.(spec|int-spec|e2e-spec|testing)\.ts$/.test(file) && !file.endsWith('.d.ts');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'migrations' ? [] : sources(path);
    return isSource(path) ? [path] : [];
  });
}

interface Touches {
  readonly reads: Set<TableName>;
  readonly writes: Set<TableName>;
}

const tableAlternation = TABLES.join('|');
const READ = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE|COPY)\\s+"?(${tableAlternation})\\b`, 'g');
const WRITE = new RegExp(`\\b(?:INSERT INTO|UPDATE|DELETE FROM|COPY)\\s+"?(${tableAlternation})\\b`, 'g');
const COPY_ROWS = new RegExp(`copyRows\\([^,]+,\\s*'(${tableAlternation})'`, 'g');

/** The tables the SQL in `text` names, by what it does with them. */
export function sqlTouches(text: string): Touches {
  const reads = new Set<TableName>();
  const writes = new Set<TableName>();
  for (const m of text.matchAll(READ)) reads.add(m[1] as TableName);
  for (const m of text.matchAll(WRITE)) writes.add(m[1] as TableName);
  for (const m of text.matchAll(COPY_ROWS)) writes.add(m[1] as TableName).add(m[1] as TableName) && reads.add(m[1] as TableName);
  return { reads, writes };
}

/**
 * Each export of libs/persistence as the text it runs: a function whole, a class method by method (`Class.method`),
 * so an app that calls a repository's `find` is not charged with its `insert`.
 */
const classBodies = new Map<string, string>();

function persistenceUnits(): Map<string, string> {
  const units = new Map<string, string>();
  for (const file of sources(__dirname)) {
    if (file.endsWith('ownership.ts') || file.endsWith('index.ts')) continue;
    const text = readFileSync(file, 'utf8');
    // Every top-level declaration, exported or not: module helpers that hold SQL are units of their own.
    const starts = [...text.matchAll(/^(?:export )?(?:abstract |async )?(class|function|const|let|interface|type) (\w+)/gm)];
    starts.forEach((m, i) => {
      const body = text.slice(m.index, starts[i + 1]?.index ?? text.length);
      if (m[1] !== 'class') return void units.set(m[2], body);
      classBodies.set(m[2], body);
      const methods = [...body.matchAll(/^ {2}(?:private |protected |public |static |readonly )*(?:async )?(\w+)\s*[(<]/gm)];
      methods.forEach((mm, j) => units.set(`${m[2]}.${mm[1]}`, body.slice(mm.index, methods[j + 1]?.index ?? body.length)));
    });
  }
  return units;
}

/** The units a text uses: the functions it names, and the methods it calls of the classes it names. */
function usedUnits(text: string, names: readonly string[], units: Map<string, string>): string[] {
  const called = new Set([...text.matchAll(/\.(\w+)\(/g)].map((m) => m[1]));
  return names.flatMap((name) => (units.has(name) ? [name] : [...units.keys()].filter((u) => u.startsWith(`${name}.`) && called.has(u.slice(name.length + 1)))));
}

function touchesOf(roots: readonly string[], units: Map<string, string>): Touches {
  const exported = [...new Set([...units.keys()].map((u) => u.split('.')[0]))];
  const reads = new Set<TableName>();
  const writes = new Set<TableName>();
  const seen = new Set<string>();
  const visit = (unit: string) => {
    if (seen.has(unit)) return;
    seen.add(unit);
    const text = units.get(unit)!;
    const direct = sqlTouches(text);
    direct.reads.forEach((t) => reads.add(t));
    direct.writes.forEach((t) => writes.add(t));
    // A method calls its own class's methods and those of the classes its class holds (fields, constructor).
    const owner = unit.includes('.') ? unit.split('.')[0] : undefined;
    const scope = owner ? classBodies.get(owner)! : text;
    // Functions count where the method itself names them; classes where its class holds them.
    const named = exported.filter((e) => e !== owner && new RegExp(`\\b${e}\\b`).test(units.has(e) ? text : scope));
    usedUnits(text, owner ? [...named, owner] : named, units).forEach(visit);
  };
  roots.forEach(visit);
  return { reads, writes };
}

function appTouches(): Map<AppName, Touches & { via: Map<TableName, string> }> {
  const units = persistenceUnits();
  const result = new Map<AppName, Touches & { via: Map<TableName, string> }>();
  for (const [dir, app] of Object.entries(APP_DIRS)) {
    const touches = { reads: new Set<TableName>(), writes: new Set<TableName>(), via: new Map<TableName, string>() };
    for (const file of sources(join(ROOT, 'apps', dir, 'src'))) {
      const text = readFileSync(file, 'utf8');
      const names = [...text.matchAll(/import (?:type )?\{([^}]*)\} from '@evals\/persistence'/g)].flatMap((m) => m[1].split(',').map((n) => n.trim().replace(/^type /, '').split(' as ')[0]).filter(Boolean));
      for (const unit of ['(own SQL)', ...usedUnits(text, names, units)]) {
        const used = unit === '(own SQL)' ? sqlTouches(text) : touchesOf([unit], units);
        used.reads.forEach((t) => touches.reads.add(t) && !touches.via.has(t) && touches.via.set(t, `${unit} in ${file.slice(ROOT.length + 1)}`));
        used.writes.forEach((t) => touches.writes.add(t));
      }
    }
    result.set(app, touches);
  }
  return result;
}

describe('table ownership in the code (issue 27)', () => {
  const touches = appTouches();
  const foreign = (app: AppName, table: TableName) => TABLE_OWNERS[table] !== app && TABLE_OWNERS[table] !== 'shared';

  it('reads the SQL it is meant to read (the analysis itself)', () => {
    expect(sqlTouches("SELECT 1 FROM evidence e JOIN runs r ON true; INSERT INTO findings (x) VALUES (1)")).toEqual({ reads: new Set(['evidence', 'runs', 'findings']), writes: new Set(['findings']) });
    expect(sqlTouches("await copyRows(sql, 'evidence', rows, cols)").writes).toEqual(new Set(['evidence']));
    // An app that imports the suite repository reads the suite tables: the ingestion, their owner.
    expect([...touches.get('ingestion')!.reads]).toEqual(expect.arrayContaining(['suite_cases', 'suite_versions', 'suite_sources']));
    // The others fold a version from its stream in the log (suite.published, issue 27).
    for (const app of ['scoring', 'regression', 'read_model'] as const) expect([...touches.get(app)!.reads].filter((t) => t.startsWith('suite_'))).toEqual([]);
    expect([...touches.get('scoring')!.reads]).toEqual(expect.arrayContaining(['events', 'evidence']));
  });

  it.each(Object.values(APP_DIRS))('%s writes no table of another app', (app) => {
    expect([...touches.get(app)!.writes].filter((t) => foreign(app, t))).toEqual([]);
  });

  it.each(Object.values(APP_DIRS))('%s reads no table of another app beyond FOREIGN_READS', (app) => {
    const t = touches.get(app)!;
    const unlisted = [...t.reads].filter((table) => foreign(app, table) && !FOREIGN_READS.some((r) => r.app === app && r.table === table));
    expect(unlisted.map((table) => `${table} via ${t.via.get(table)}`)).toEqual([]);
  });

  it('every FOREIGN_READS entry is still needed, so the list only shrinks', () => {
    const stale = FOREIGN_READS.filter((r) => !touches.get(r.app)!.reads.has(r.table)).map((r) => `${r.app}:${r.table}`);
    expect(stale).toEqual([]);
  });

  it('docs/architecture.md shows the same owners and the same remaining reads', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const owners = Object.fromEntries([...doc.matchAll(/^\| `(\w+)` \| (\w+) \|$/gm)].map((m) => [m[1], m[2]]));
    expect(owners).toEqual(TABLE_OWNERS);
    const reads = [...doc.matchAll(/^\| (\w+) \| `(\w+)` \| /gm)].map((m) => `${m[1]}:${m[2]}`);
    expect(reads).toEqual(FOREIGN_READS.map((r) => `${r.app}:${r.table}`));
  });

  it('every foreign read says what replaces it', () => {
    for (const r of FOREIGN_READS) expect(r.replacedBy.length).toBeGreaterThan(5);
  });
});

describe('app schemas (issue 27)', () => {
  it('puts each app in a schema of its own beside the shared one, named by the base', () => {
    expect(deploymentSchemas('public')).toEqual(['public', 'ingestion', 'scoring', 'regression', 'read_model']);
    // A test's base keeps its apps apart from every other test's on the same server.
    expect(deploymentSchemas('it_ab12')).toEqual(['it_ab12', 'it_ab12_ingestion', 'it_ab12_scoring', 'it_ab12_regression', 'it_ab12_read_model']);
    expect(tableSchema('public', 'evidence')).toBe('scoring');
    expect(tableSchema('it_ab12', 'outbox')).toBe('it_ab12');
  });

  it('gives the embedded database the same search_path as a server connection (PGlite takes it as a setting)', () => {
    expect(EMBEDDED_SEARCH_PATH.split(',')).toEqual(deploymentSchemas('public'));
  });

  it('lets an app into another app schema only for a listed foreign read', () => {
    for (const app of APPS) {
      const expected = new Set<string>([app, ...FOREIGN_READS.filter((r) => r.app === app).map((r) => TABLE_OWNERS[r.table])]);
      expect(new Set(schemaUsageOf(app))).toEqual(expected);
    }
  });
});
