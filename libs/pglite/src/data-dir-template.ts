import * as fs from 'node:fs';
import * as path from 'node:path';
import { type MessagePort, Worker } from 'node:worker_threads';

/**
 * Issue 31: PGlite's initdb of a new data directory takes about 5 s and grows its WASM memory to 650-780 MiB
 * (measured, PGlite 0.5.14) - most of a newcomer's first `evals run`, and all of its peak memory - and the
 * migrations then cost about 1.5-2 s more, mostly fsyncs. What initdb and the migrations write does not
 * depend on the machine (one WASM build, the C locale, user postgres, the same DDL), so it is written once,
 * by `npm run pglite:template` (scripts/pglite-template.js), as a gzipped tar of a freshly initialised and
 * migrated directory (PGlite's own `dumpDataDir`), and a new directory is unpacked from it: files, not a
 * database start. The migrations it holds are listed beside it (`templateMigrations`); a migration added
 * since runs on the first start as on any upgrade. The template is per PGlite version; without one for the
 * installed version the caller runs initdb and every migration.
 *
 * Every installation then shares the template's database system identifier, which matters only to physical
 * replication - never used with an embedded database.
 */
export const TEMPLATE_DIR = path.join(__dirname, '..', 'assets');

export function pgliteVersion(): string {
  const entry = require.resolve('@electric-sql/pglite');
  const manifest = JSON.parse(fs.readFileSync(path.join(entry, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

export function templateFile(version = pgliteVersion()): string {
  return path.join(TEMPLATE_DIR, `pgdata-${version}.tar.gz`);
}

/**
 * The migrations the template holds applied (`npm run pglite:template` writes them beside it): a directory
 * unpacked from it starts migrated up to there, and the first start runs only those added since. None when
 * there is no manifest (a template of initdb's output alone, as before).
 */
export function templateMigrations(file = templateFile()): string[] {
  try {
    const manifest = JSON.parse(fs.readFileSync(file.replace(/\.tar\.gz$/, '.migrations.json'), 'utf8')) as { migrations?: unknown };
    return Array.isArray(manifest.migrations) ? manifest.migrations.filter((m): m is string => typeof m === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Unpacks the template for the installed PGlite into `dataDir`; false (nothing usable written) when there is
 * none or it is not a tar this reader knows. PG_VERSION - which marks a directory as initialised - is written
 * last, so a start interrupted half-way leaves a directory that the next start unpacks again.
 *
 * In a worker thread of its own that then exits (issue 31, round 3). On the caller's thread the unpack (the
 * archive inflated to 40 MB, about 1 100 files created) took 0.6-0.8 s of a first `evals run`'s main thread
 * before it could load the framework; in a worker it runs on the other core meanwhile. And its buffers go
 * with the worker's heap: held by the caller's heap until the last write, they were garbage that its next
 * full collection freed seconds later. (Streamed on the caller's thread instead, the unpack advanced only
 * when that thread yielded - rarely, while it loads modules - and took 1.6 s.)
 *
 * `notify` gets the same answer (false also when a write fails), posted from the worker itself: the PGlite
 * worker waiting on it opens the directory the moment it is written, without waiting for the caller's
 * thread - busy loading modules, it heard of the unpack's end 0.1-0.3 s late (issue 31, round 4).
 */
export function unpackTemplate(dataDir: string, file = templateFile(), notify?: MessagePort): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const worker = new Worker(`${READ_TAR_SOURCE}\n${UNPACK_SOURCE}`, {
      eval: true,
      workerData: { dataDir: path.resolve(dataDir), file, notify },
      transferList: notify ? [notify] : [],
    });
    let unpacked = false;
    let failed: Error | undefined;
    worker.once('message', (ok: boolean) => (unpacked = ok));
    // A write that fails (a full disk, no permission) is the start's failure, as it was on the caller's thread.
    worker.once('error', (error: Error) => (failed = error));
    worker.once('exit', () => (failed ? reject(failed) : resolve(unpacked)));
  });
}

interface TarEntry {
  readonly name: string;
  readonly type: 'file' | 'dir';
  readonly data: Buffer;
}

/**
 * The regular files and directories of a ustar archive (what PGlite's dumpDataDir writes), names relative and
 * checked; undefined for anything else (links, a name leaving the directory, a damaged header), so that a bad
 * template is never half-trusted. JavaScript in a string, run both here and in unpackTemplate's worker
 * (which has no TypeScript loader): one reader, not two.
 */
const READ_TAR_SOURCE = `
function readTar(tar) {
  const path = require('node:path');
  const entries = [];
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return entries;
    const text = (from, length) => header.toString('utf8', from, from + length).replace(/\\0.*$/s, '');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i];
    if (parseInt(text(148, 8).trim(), 8) !== sum) return undefined;
    const prefix = text(257, 6).startsWith('ustar') ? text(345, 155) : '';
    const name = path.posix.normalize(prefix + (prefix ? '/' : '') + text(0, 100)).replace(/^\\/+/, '').replace(/\\/+$/, '');
    const size = parseInt(text(124, 12).trim() || '0', 8);
    const flag = String.fromCharCode(header[156]);
    if (!Number.isSafeInteger(size) || size < 0 || at + 512 + size > tar.length) return undefined;
    if (name === '' || name === '.' || name.startsWith('..') || path.isAbsolute(name)) return undefined;
    if (flag === '5') entries.push({ name, type: 'dir', data: Buffer.alloc(0) });
    else if (flag === '0' || flag === '\\0') entries.push({ name, type: 'file', data: tar.subarray(at + 512, at + 512 + size) });
    else return undefined;
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}`;

/** unpackTemplate's worker: posts true once PG_VERSION is written, false if the archive is missing or refused. */
const UNPACK_SOURCE = `
const fs = require('node:fs');
const path = require('node:path');
const { parentPort, workerData } = require('node:worker_threads');
const { dataDir, file, notify } = workerData;
function answer(ok) {
  if (notify) notify.postMessage(ok);
  parentPort.postMessage(ok);
}
function unpack() {
  let tar;
  try {
    const gz = fs.readFileSync(file);
    // The output in one buffer of the size gzip records (modulo 2^32) instead of 16 KiB chunks joined at the
    // end: the inflate of the 40 MB took about half the time.
    tar = require('node:zlib').gunzipSync(gz, { chunkSize: Math.max(64 * 1024, gz.readUInt32LE(gz.length - 4)) });
  } catch {
    tar = undefined;
  }
  const entries = tar && readTar(tar);
  if (!entries || !entries.some((e) => e.name === 'PG_VERSION' && e.type === 'file')) return false;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let marker;
  for (const e of entries) {
    const target = path.join(dataDir, e.name);
    if (e.type === 'dir') fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    else if (e.name === 'PG_VERSION') marker = e.data;
    else {
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      fs.writeFileSync(target, e.data, { mode: 0o600 });
    }
  }
  fs.writeFileSync(path.join(dataDir, 'PG_VERSION'), marker, { mode: 0o600 });
  return true;
}
let ok;
try {
  ok = unpack();
} catch (error) {
  if (notify) notify.postMessage(false);
  throw error;
}
answer(ok);`;

export const readTar = new Function('require', `${READ_TAR_SOURCE}\nreturn readTar;`)(require) as (tar: Buffer) => TarEntry[] | undefined;
