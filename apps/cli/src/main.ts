import { runCli } from './cli';
import { openEmbedded } from './embedded/open-embedded';

// `evals scorecard --format csv | head`: a closed pipe ends the output quietly, not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
  writeErr: (t) => process.stderr.write(t),
  env: process.env,
  isTty: Boolean(process.stdout.isTTY),
  errIsTty: Boolean(process.stderr.isTTY),
  cwd: process.cwd(),
  embedded: (dataDir) => openEmbedded(dataDir, process.env, (line) => process.stderr.write(`${line}\n`)),
}).then((code) => {
  process.exitCode = code;
});
