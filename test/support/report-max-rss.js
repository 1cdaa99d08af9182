// Preloaded with `node -r` into a CLI child by tests that bound its memory: prints the process's peak
// resident set size (process.resourceUsage().maxRSS, KiB) on stderr as it exits.
process.on('exit', () => process.stderr.write(`MAXRSS_KB ${process.resourceUsage().maxRSS}\n`));
