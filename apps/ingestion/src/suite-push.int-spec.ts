import 'reflect-metadata';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { parseSuiteYaml, suiteContentHash } from '@evals/domain';
import { createDataSource, migrate } from '@evals/persistence';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { SuiteCatalogService } from './suite-catalog.service';
import { SuitesController } from './suites.controller';

/**
 * V2, issue 15: a suite text pushed again byte for byte, while its version is still the latest, is answered
 * from the stored version without parsing (the bytes determine the key and the content; a stored version
 * never changes). Everything else takes the full path: unknown bytes (then known), a revert (a new version
 * with same_content_as), a JSON object body. On the real PostgreSQL, through the controller.
 */
describe('integration: POST /v1/suites answers known suite bytes without parsing them (V2, issue 15)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let catalog: SuiteCatalogService;
  let controller: SuitesController;
  /** Calls of the full path (a read suite reaching the catalog's store, streamed or whole). */
  let full: jest.SpyInstance;

  const suiteText = (key: string, expected: string, extra = ''): string =>
    [`key: ${key}`, 'default_scorer: {type: exact}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:', '  - id: c1', '    input: hi', `    expected: ${expected}`, '  - id: c2', '    input: ho', '    expected: y', extra].join('\n');

  async function push(body: unknown, contentType = 'application/yaml', project = DEFAULT_PROJECT): Promise<{ status: number; answer: Record<string, any> }> {
    let status = 0;
    const res = { status: (code: number) => ((status = code), res) } as unknown as Response;
    const answer = await controller.push(project, body as string, contentType, res);
    return { status, answer: JSON.parse(JSON.stringify(answer)) };
  }

  beforeAll(async () => {
    ({ schema, ds, catalog } = await openCatalog('suite_push', 4));
    controller = new SuitesController(catalog);
    full = jest.spyOn(catalog as unknown as { store: () => Promise<unknown> }, 'store');
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  beforeEach(() => full.mockClear());

  it('a second identical push is answered as the full path answers it (200, created: false, the same DTO) without a parse', async () => {
    const text = suiteText('known', 'x');
    const first = await push(text);
    expect(first.status).toBe(201);
    expect(first.answer).toMatchObject({ created: true, suite: { suite_key: 'known', version: 1, case_count: 2 } });
    expect(full).toHaveBeenCalledTimes(1);

    const again = await push(text);
    expect(full).toHaveBeenCalledTimes(1);
    expect(again.status).toBe(200);
    expect(again.answer).toEqual({ created: false, suite: first.answer.suite });

    // Different bytes, same content (a comment): the full path says the same, and then knows these bytes too.
    const commented = `# the same suite\n${text}`;
    const viaFull = await push(commented);
    expect(full).toHaveBeenCalledTimes(2);
    expect(viaFull).toEqual(again);
    const known = await push(commented);
    expect(full).toHaveBeenCalledTimes(2);
    expect(known).toEqual(again);
  });

  it('known bytes are not parsed at all: a parser that would now refuse them is never asked', async () => {
    const text = suiteText('immutable', 'x');
    await push(text);
    const refuse = jest.fn((): never => {
      throw new Error('parsed');
    });
    const answer = await catalog.pushText(DEFAULT_PROJECT, text, refuse);
    expect(refuse).not.toHaveBeenCalled();
    expect(answer).toMatchObject({ created: false, version: { suite_key: 'immutable', version: 1 } });
    // Bytes never accepted are parsed (and here refused).
    await expect(catalog.pushText(DEFAULT_PROJECT, `${text}\n`, refuse)).rejects.toThrow('parsed');
    expect(refuse).toHaveBeenCalledTimes(1);
  });

  it('a revert still mints a new version with same_content_as; pushing it again is then known', async () => {
    const a = suiteText('revert', 'x');
    const b = suiteText('revert', 'z');
    expect((await push(a)).answer).toMatchObject({ created: true, suite: { version: 1 } });
    expect((await push(b)).answer).toMatchObject({ created: true, suite: { version: 2 } });
    full.mockClear();
    const reverted = await push(a);
    expect(reverted.status).toBe(201);
    expect(reverted.answer).toMatchObject({ created: true, same_content_as: 1, suite: { suite_key: 'revert', version: 3 } });
    expect(full).toHaveBeenCalledTimes(1);
    const again = await push(a);
    expect(full).toHaveBeenCalledTimes(1);
    expect(again).toEqual({ status: 200, answer: { created: false, suite: reverted.answer.suite } });
    // b's bytes point at v2, no longer the latest: the full path, a revert again.
    expect((await push(b)).answer).toMatchObject({ created: true, same_content_as: 2, suite: { version: 4 } });
    expect(full).toHaveBeenCalledTimes(2);
  });

  it("issue 30: the same key and bytes pushed into two projects: each its own version 1; the bytes known in one are new in the other", async () => {
    await ds.query(`INSERT INTO projects (id, name) VALUES ('push-a', 'A'), ('push-b', 'B') ON CONFLICT DO NOTHING`);
    const text = suiteText('per-project', 'x');
    const inA = await push(text, 'application/yaml', 'push-a');
    full.mockClear();
    const inB = await push(text, 'application/yaml', 'push-b');
    // B's push is not answered from A's known bytes: it takes the full path and mints B's own version.
    expect(full).toHaveBeenCalledTimes(1);
    expect([inA.status, inB.status]).toEqual([201, 201]);
    expect(inA.answer.suite).toMatchObject({ project: 'push-a', suite_key: 'per-project', version: 1 });
    expect(inB.answer.suite).toMatchObject({ project: 'push-b', suite_key: 'per-project', version: 1 });
    // Other content in B is B's version 2; A still has one version, and `default` none.
    expect((await push(suiteText('per-project', 'z'), 'application/yaml', 'push-b')).answer.suite).toMatchObject({ version: 2 });
    expect((await controller.list('push-a')).items.map((s) => [s.suite_key, s.latest_version])).toEqual([['per-project', 1]]);
    expect((await controller.list('push-b')).items.map((s) => [s.suite_key, s.latest_version])).toEqual([['per-project', 2]]);
    expect((await controller.list(DEFAULT_PROJECT)).items.map((s) => s.suite_key)).not.toContain('per-project');
    await expect(controller.latest(DEFAULT_PROJECT, 'per-project')).rejects.toMatchObject({ code: 'SUITE_NOT_FOUND', message: 'no suite with key per-project' });
    await expect(controller.version('push-a', 'per-project', '2')).rejects.toMatchObject({ code: 'SUITE_VERSION_NOT_FOUND' });
    expect((await controller.version('push-b', 'per-project', '2')).suite).toMatchObject({ version: 2 });
  });

  it('a JSON object body always takes the full path; a refused text is not remembered', async () => {
    const body = { key: 'as-json', default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, cases: [{ id: 'c1', input: 'hi', expected: 'x' }] };
    expect((await push(body, 'application/json')).status).toBe(201);
    expect((await push(body, 'application/json')).status).toBe(200);
    expect(full).toHaveBeenCalledTimes(2);

    const bad = suiteText('refused', 'x', '  - id: c1\n    input: dup\n    expected: q\n');
    for (let i = 0; i < 2; i++) await expect(push(bad)).rejects.toMatchObject({ code: 'SUITE_INVALID' });
  });

  it('two concurrent pushes of the same new bytes: one version, and the bytes are known after', async () => {
    const text = suiteText('race', 'x');
    const answers = await Promise.all([push(text), push(text), push(text)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.answer.suite.version))).toEqual(new Set([1]));
    full.mockClear();
    expect((await push(text)).status).toBe(200);
    expect(full).not.toHaveBeenCalled();
    expect((await ds.query(`SELECT suite_key, version FROM suite_sources WHERE suite_key = 'race'`)) as unknown[]).toEqual([{ suite_key: 'race', version: 1 }]);
  });
});

/** A catalog on a migrated schema of its own. */
async function openCatalog(name: string, poolSize: number): Promise<{ schema: TestSchema; ds: DataSource; catalog: SuiteCatalogService }> {
  const schema = await createTestSchema(name);
  const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize });
  await ds.initialize();
  await migrate(ds);
  return { schema, ds, catalog: new SuiteCatalogService(ds) };
}

/** Issue 31: a YAML push is read slice by slice and stored as the whole-suite path stores it. */
describe('integration: a streamed YAML push stores what the whole-suite path stores (issue 31)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let catalog: SuiteCatalogService;

  beforeAll(async () => {
    ({ schema, ds, catalog } = await openCatalog('suite_stream', 2));
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  const text = (key: string, n: number, bad?: number): string => {
    const lines = [`key: ${key}`, 'default_scorer: {type: contains, value: "1"}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:'];
    for (let i = 0; i < n; i++) lines.push(`  - id: c${i === bad ? 0 : i}`, `    input: case ${i}`, `    expected: "1"`, `    tags: [t${i % 3}, a]`);
    return `${lines.join('\n')}\n`;
  };
  const refuse = (errors: readonly unknown[]) => Object.assign(new Error('refused'), { errors });

  it.each([
    ['read twice, a slice at a time', 0],
    ['read once, its cases kept', 1e9],
  ])('%s: the same version, hash, case count and cases in order as a push of the parsed suite', async (how, onePassMaxChars) => {
    catalog.onePassMaxChars = onePassMaxChars;
    const key = onePassMaxChars === 0 ? 'twice' : 'once';
    const streamed = await catalog.pushYaml(DEFAULT_PROJECT, text(`streamed-${key}`, 230), 'body', refuse);
    const parsed = parseSuiteYaml(text(`whole-${key}`, 230), 'body', { scorers: false });
    if (!parsed.ok) throw new Error('the fixture is valid');
    const whole = await catalog.push(DEFAULT_PROJECT, parsed.suite);
    expect(streamed).toMatchObject({ created: true, version: { version: 1, case_count: 230 } });
    const a = await catalog.find(DEFAULT_PROJECT, `streamed-${key}`);
    const b = await catalog.find(DEFAULT_PROJECT, `whole-${key}`);
    expect(a!.cases).toEqual(b!.cases);
    expect(a!.cases.map((c) => c.case_id)).toEqual(Array.from({ length: 230 }, (_, i) => `c${i}`));
    // Only the key differs between the two texts, so the hashes differ; the streamed hash is the parsed suite's.
    const same = parseSuiteYaml(text(`streamed-${key}`, 230), 'body', { scorers: false });
    expect(same.ok && suiteContentHash(same.suite)).toBe(streamed.version.content_hash);
    expect(whole.version.content_hash).not.toBe(streamed.version.content_hash);
  });

  it('refuses with the problems parseSuiteYaml reports and stores nothing', async () => {
    catalog.onePassMaxChars = 0;
    const bad = text('refused', 120, 101);
    const expected = parseSuiteYaml(bad, 'body', { scorers: false });
    await expect(catalog.pushYaml(DEFAULT_PROJECT, bad, 'body', refuse)).rejects.toMatchObject({ errors: expected.ok ? [] : expected.errors });
    expect(await catalog.find(DEFAULT_PROJECT, 'refused')).toBeNull();
  });
});
