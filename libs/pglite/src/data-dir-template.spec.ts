import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { pgliteVersion, readTar, templateFile, unpackTemplate } from './data-dir-template';

/** A one-entry ustar archive, as tar writes it, for the refusals below. */
function tarOf(name: string, flag: string, data = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'utf8');
  header.write('0000644\0', 100);
  header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
  header.write(flag, 156);
  header.write('ustar\0', 257);
  header.fill(32, 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  const body = Buffer.alloc(Math.ceil(data.length / 512) * 512);
  data.copy(body);
  return Buffer.concat([header, body, Buffer.alloc(1024)]);
}

describe('the PGlite data directory template (issue 31)', () => {
  it('exists for the installed PGlite: upgrading it means `npm run pglite:template`', () => {
    expect(fs.existsSync(templateFile(pgliteVersion()))).toBe(true);
  });

  it('is initdb output: PG_VERSION, the catalogs and the WAL, nothing but files and directories', () => {
    const entries = readTar(gunzipSync(fs.readFileSync(templateFile())));
    expect(entries).toBeDefined();
    const names = new Set(entries!.map((e) => e.name));
    for (const name of ['PG_VERSION', 'global/pg_control', 'base/1', 'pg_wal', 'postgresql.conf']) expect(names).toContain(name);
  });

  it('reads a file entry and refuses links, names leaving the directory and damaged headers', () => {
    expect(readTar(tarOf('/a/b', '0', Buffer.from('hi')))).toEqual([{ name: 'a/b', type: 'file', data: Buffer.from('hi') }]);
    expect(readTar(tarOf('a', '2'))).toBeUndefined();
    expect(readTar(tarOf('../etc/x', '0'))).toBeUndefined();
    expect(readTar(tarOf('a/../../x', '0'))).toBeUndefined();
    const damaged = tarOf('a', '0');
    damaged[10] = 0x41;
    expect(readTar(damaged)).toBeUndefined();
  });

  it('unpacks into a directory, PG_VERSION last; a missing or foreign template writes nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-template-'));
    try {
      await expect(unpackTemplate(path.join(dir, 'none'), path.join(dir, 'missing.tar.gz'))).resolves.toBe(false);
      expect(fs.existsSync(path.join(dir, 'none'))).toBe(false);
      fs.writeFileSync(path.join(dir, 'foreign.tar.gz'), gzipSync(tarOf('a', '2')));
      await expect(unpackTemplate(path.join(dir, 'foreign'), path.join(dir, 'foreign.tar.gz'))).resolves.toBe(false);
      expect(fs.existsSync(path.join(dir, 'foreign'))).toBe(false);
      await expect(unpackTemplate(path.join(dir, 'pg'))).resolves.toBe(true);
      expect(fs.readFileSync(path.join(dir, 'pg', 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
      expect(fs.statSync(path.join(dir, 'pg', 'global', 'pg_control')).size).toBeGreaterThan(0);
      // The writes run several at a time: every file of the archive, whole, none skipped or cut.
      const files = readTar(gunzipSync(fs.readFileSync(templateFile())))!.filter((e) => e.type === 'file');
      expect(files.length).toBeGreaterThan(1000);
      const differing = files.filter((e) => !fs.readFileSync(path.join(dir, 'pg', e.name)).equals(e.data)).map((e) => e.name);
      expect(differing).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes nothing of an archive cut half-way', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-template-'));
    try {
      const tar = gunzipSync(fs.readFileSync(templateFile()));
      // The real archive cut in its middle: its first half alone is well-formed.
      fs.writeFileSync(path.join(dir, 'cut.tar.gz'), gzipSync(tar.subarray(0, Math.floor(tar.length / 2) + 3)));
      await expect(unpackTemplate(path.join(dir, 'pg'), path.join(dir, 'cut.tar.gz'))).resolves.toBe(false);
      expect(fs.existsSync(path.join(dir, 'pg'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails where a file cannot be written, as a start does', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-template-'));
    try {
      // A file where the data directory's first subdirectory must go.
      fs.mkdirSync(path.join(dir, 'pg'));
      const first = readTar(gunzipSync(fs.readFileSync(templateFile())))!.find((e) => e.type === 'file' && e.name.includes('/'))!;
      fs.writeFileSync(path.join(dir, 'pg', first.name.split('/')[0]!), 'not a directory');
      await expect(unpackTemplate(path.join(dir, 'pg'))).rejects.toThrow();
      expect(fs.existsSync(path.join(dir, 'pg', 'PG_VERSION'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
