// The checkout CLI's caches in node_modules/.cache/evals-cli are keyed by content: every edit of a source
// adds a compiled file (bin/register-sources.js) and a V8 code cache entry (bin/code-cache.js), and every
// new framework bundle a directory (bin/framework-bundle.js). Nothing removed the old ones; a checkout under
// daily work grew by tens of megabytes a day. These keep each cache bounded, at the moment a process has
// just added to it - never on a start that only reads.
const fs = require('node:fs');
const path = require('node:path');

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * When `dir` holds more than `limit` files, removes those older than `maxAgeMs` that this process did not
 * use. The ones it used (`used`, paths in `dir`) are touched first: an entry written long ago and read on
 * every start is the newest, not the oldest. Another command's entries left out by this one are removed only
 * past `maxAgeMs` unused by anyone who pruned; losing one costs its recompile, once. Returns what it removed.
 */
function pruneFiles(dir, used, { limit, maxAgeMs = DAY_MS, now = Date.now() }) {
  let names;
  try {
    names = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
  } catch {
    return 0;
  }
  if (names.length <= limit) return 0;
  const keep = new Set();
  const seconds = now / 1000;
  for (const file of used) {
    keep.add(path.basename(file));
    try {
      fs.utimesSync(file, seconds, seconds);
    } catch {
      // Gone meanwhile: nothing to keep.
    }
  }
  let removed = 0;
  for (const name of names) {
    if (keep.has(name)) continue;
    const file = path.join(dir, name);
    try {
      if (now - fs.statSync(file).mtimeMs > maxAgeMs) {
        fs.rmSync(file, { force: true });
        removed += 1;
      }
    } catch {
      // Removed by another process: fine.
    }
  }
  return removed;
}

/** Removes the `prefix*` directories of `dir` other than `current` that are older than `maxAgeMs`. */
function pruneDirectories(dir, prefix, current, { maxAgeMs = DAY_MS, now = Date.now() } = {}) {
  let removed = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(prefix) || path.join(dir, entry.name) === current) continue;
    const old = path.join(dir, entry.name);
    try {
      // Another process started from the old one minutes ago has loaded it already; age keeps a starting one safe.
      if (now - fs.statSync(old).mtimeMs > maxAgeMs) {
        fs.rmSync(old, { recursive: true, force: true });
        removed += 1;
      }
    } catch {
      // Removed by another process: fine.
    }
  }
  return removed;
}

module.exports = { pruneFiles, pruneDirectories, DAY_MS };
