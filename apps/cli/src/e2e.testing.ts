import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** Helpers of the CLI's end-to-end tests (test/e2e/cli*.e2e-spec.ts): the real `bin/evals.js` as a child process. */
const root = path.resolve(__dirname, '../../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runEvals(args: string[], env: Record<string, string>, cwd = root): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'evals.js'), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A port nothing listens on: bound, then closed. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export function parseJunit(file: string): any {
  const xml = fs.readFileSync(file, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (name, _jpath, _leaf, isAttribute) => !isAttribute && ['testsuite', 'testcase', 'property', 'failure', 'error', 'skipped'].includes(name),
  }).parse(xml);
}

