import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The embedded all-in-one keeps everything in one directory (docs/embedded.md):
 *
 *   .evals/
 *     postgres/     PGlite's data files (the event log, evidence, read model, baselines, ...)
 *     bus/          the in-process bus's journal (messages not yet acknowledged)
 *     secret        the evidence HMAC key (D2), generated once, mode 0600
 *     owner.json    the process that has the directory open: {pid, url}; a stale one is taken over
 *
 * One process at a time may open it (PGlite is single-writer); a second `evals` command finds the owner's
 * URL here and talks to it over HTTP instead.
 */
export interface DataDir {
  readonly root: string;
  readonly postgres: string;
  readonly bus: string;
}

export interface Owner {
  readonly pid: number;
  /** Where the owner serves the API; null while it is starting. */
  readonly url: string | null;
}

export class DataDirBusyError extends Error {
  readonly code = 'DATA_DIR_BUSY';
  constructor(
    readonly dir: string,
    readonly owner: Owner,
  ) {
    super(`${dir} is open in process ${owner.pid}${owner.url ? ` (serving ${owner.url})` : ' (starting)'}`);
  }
}

/**
 * Takes the directory for this process: creates it (0700) when new, and claims owner.json with an exclusive
 * create. An owner whose process is gone left a stale file, which is replaced.
 */
export function claimDataDir(root: string, pid = process.pid): { dir: DataDir; advertise(url: string): void; release(): void } {
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const dir: DataDir = { root, postgres: path.join(root, 'postgres'), bus: path.join(root, 'bus') };
  const ownerFile = path.join(root, 'owner.json');
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(ownerFile, JSON.stringify({ pid, url: null } satisfies Owner), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const owner = readOwner(root);
      if (owner && owner.pid !== pid && alive(owner.pid)) throw new DataDirBusyError(root, owner);
      fs.rmSync(ownerFile, { force: true });
    }
  }
  return {
    dir,
    advertise(url) {
      fs.writeFileSync(ownerFile, JSON.stringify({ pid, url } satisfies Owner), { mode: 0o600 });
    },
    release() {
      if (readOwner(root)?.pid === pid) fs.rmSync(ownerFile, { force: true });
    },
  };
}

/** The live owner of the directory, if any. */
export function liveOwner(root: string): Owner | null {
  const owner = readOwner(root);
  return owner && alive(owner.pid) ? owner : null;
}

function readOwner(root: string): Owner | null {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(root, 'owner.json'), 'utf8')) as Partial<Owner>;
    return Number.isSafeInteger(value.pid) ? { pid: value.pid!, url: typeof value.url === 'string' ? value.url : null } : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The HMAC key of evidence detail hashes (D2) for this directory: generated once (256 random bits) and
 * kept beside the data it keys, readable by the owner only. EVALS_HMAC_SECRET, when set, wins.
 */
export function dataDirSecret(root: string): string {
  const file = path.join(root, 'secret');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('base64url');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
