import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The embedded all-in-one keeps everything in one directory (docs/embedded.md):
 *
 *   .evals/
 *     postgres/        PGlite's data files (the event log, evidence, read model, baselines, ...)
 *     bus/             the in-process bus's journal (messages not yet acknowledged)
 *     secret           the evidence HMAC key (D2), generated once, mode 0600
 *     owner.json       the process that has the directory open: {pid, mode, url}
 *     .gitignore       `*`: none of it belongs in a repository
 *
 * One process at a time may open it (PGlite is single-writer); another `evals` command finds the owner's
 * URL here and talks to it over HTTP instead.
 */
export interface DataDir {
  readonly root: string;
  readonly postgres: string;
  readonly bus: string;
}

/** `serve`: an `evals serve` others may use; `command`: one CLI command's own server, gone when it ends. */
export type OwnerMode = 'serve' | 'command';

export interface Owner {
  readonly pid: number;
  readonly mode: OwnerMode;
  /** Where the owner serves the API; null while it is starting. */
  readonly url: string | null;
}

export class DataDirBusyError extends Error {
  readonly code = 'DATA_DIR_BUSY';
  constructor(
    readonly dir: string,
    readonly owner: Owner | null,
  ) {
    super(
      owner
        ? `${dir} is open in process ${owner.pid}${owner.url ? ` (serving ${owner.url})` : owner.mode === 'command' ? ' (another evals command)' : ' (starting)'}`
        : `${dir}/owner.json cannot be read: if no evals process uses the directory, remove that file`,
    );
  }
}

/** Directories this process has claimed: a file naming our own pid that is not in here is a dead namesake's. */
const claimed = new Set<string>();

/**
 * Takes the directory for this process: creates it (0700) when new, and claims owner.json atomically (a
 * complete file linked into place, so nobody ever reads a half-written one). An owner whose process is gone
 * left a stale file, which is taken over - also when a restarted process got the same pid, as containers do.
 */
export function claimDataDir(root: string, mode: OwnerMode, pid = process.pid): { dir: DataDir; advertise(url: string): void; release(): void } {
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const ignore = path.join(root, '.gitignore');
  if (!fs.existsSync(ignore)) fs.writeFileSync(ignore, '*\n');
  const dir: DataDir = { root, postgres: path.join(root, 'postgres'), bus: path.join(root, 'bus') };
  const ownerFile = path.join(root, 'owner.json');
  if (claimed.has(root)) throw new DataDirBusyError(root, readOwner(root));
  for (let attempt = 0; ; attempt++) {
    if (writeExclusive(ownerFile, JSON.stringify({ pid, mode, url: null } satisfies Owner))) break;
    const owner = readOwner(root);
    if (attempt > 0 || !owner || (alive(owner.pid) && owner.pid !== pid)) throw new DataDirBusyError(root, owner);
    // Stale: move it aside under a name of our own, so two processes taking it over never remove each other's claim.
    const aside = `${ownerFile}.stale-${pid}-${randomBytes(4).toString('hex')}`;
    try {
      fs.renameSync(ownerFile, aside);
      fs.rmSync(aside, { force: true });
    } catch {
      // Someone else moved it first; the next attempt decides.
    }
  }
  claimed.add(root);
  return {
    dir,
    advertise(url) {
      const temp = `${ownerFile}.${pid}.tmp`;
      fs.writeFileSync(temp, JSON.stringify({ pid, mode, url } satisfies Owner), { mode: 0o600 });
      fs.renameSync(temp, ownerFile);
    },
    release() {
      claimed.delete(root);
      if (readOwner(root)?.pid === pid) fs.rmSync(ownerFile, { force: true });
    },
  };
}

/** The live owner of the directory, if any (never this process's own claim: that one it knows). */
export function liveOwner(root: string): Owner | null {
  const owner = readOwner(root);
  return owner && owner.pid !== process.pid && alive(owner.pid) ? owner : null;
}

/** Creates `file` with `content` unless it exists: written aside, then hard-linked, which fails if taken. */
function writeExclusive(file: string, content: string): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temp, content, { mode: 0o600 });
  try {
    fs.linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function readOwner(root: string): Owner | null {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(root, 'owner.json'), 'utf8')) as Partial<Owner>;
    if (!Number.isSafeInteger(value.pid)) return null;
    return { pid: value.pid!, mode: value.mode === 'command' ? 'command' : 'serve', url: typeof value.url === 'string' ? value.url : null };
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The HMAC key of evidence detail hashes (D2) for this directory: generated once (256 random bits) and
 * kept beside the data it keys, readable by the owner only. Created atomically and never overwritten: a
 * new key would make every later hash incomparable with the earlier ones. EVALS_HMAC_SECRET, when set, wins.
 */
export function dataDirSecret(root: string): string {
  const file = path.join(root, 'secret');
  writeExclusive(file, `${randomBytes(32).toString('base64url')}\n`);
  const secret = fs.readFileSync(file, 'utf8').trim();
  if (secret.length < 32) throw new Error(`${file} holds no usable key (under 32 characters); restore it, or remove it to start a new key`);
  return secret;
}
