import { runCli } from './commands';

runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
  env: process.env,
  isTty: Boolean(process.stdout.isTTY),
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
