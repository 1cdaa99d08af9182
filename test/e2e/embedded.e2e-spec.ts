import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The embedded all-in-one default (issue 7, docs/embedded.md) in a network namespace where no server is
 * reachable: the README's first command (`npm run demo`) completes and prints the verdict, the finding
 * and the scorecard, on PGlite and the in-process bus.
 */
const root = path.resolve(__dirname, '../..');

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(command: string, args: string[], env: Record<string, string>, cwd = root): Promise<Result> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** Connects to each port and reports what happened: in an empty namespace every one is refused. */
const PROBE = `
const net = require('node:net');
Promise.all([5432, 4222, 6379].map((port) => new Promise((resolve) => {
  const s = net.connect({ host: '127.0.0.1', port });
  s.setTimeout(2000, () => { s.destroy(); resolve([port, 'timeout']); });
  s.on('connect', () => { s.destroy(); resolve([port, 'connected']); });
  s.on('error', (e) => resolve([port, e.code]));
}))).then((r) => console.log('PROBE ' + JSON.stringify(Object.fromEntries(r))));
`;

describe('e2e: the embedded default with no servers reachable (issue 7)', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-netns-'));
  });

  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('`npm run demo` in an `unshare -n` namespace (loopback only) prints the gate verdict, the finding and the scorecard', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      NO_COLOR: '1',
      EVALS_NO_PROGRESS: '1',
      EVALS_DATA_DIR: dataDir,
      npm_config_update_notifier: 'false',
    };
    const script = `ip link set lo up && node -e "$PROBE" && npm run --silent demo`;
    const r = await run('unshare', ['-n', '--', 'bash', '-c', script], { ...env, PROBE });
    if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);

    // The servers of this machine exist outside the namespace only.
    const probe = JSON.parse(/PROBE (.*)/.exec(r.stdout)?.[1] ?? '{}');
    expect(probe).toEqual({ '5432': 'ECONNREFUSED', '4222': 'ECONNREFUSED', '6379': 'ECONNREFUSED' });

    expect(r.stderr).toContain('embedded service on');
    expect(r.stdout).toMatch(/support-triage v1: (created|unchanged)/);
    expect(r.stdout).toMatch(/run demo-[0-9a-f]{8}-baseline: PASS/);
    // The gate: the regression with Newcombe's interval, both counts, and the blocking verdict.
    // Against the baseline the demo pinned (G5), as every later gate of the subject is.
    expect(r.stdout).toMatch(/regression: REGRESSED against demo-[0-9a-f]{8}-baseline \(pinned\)/);
    // On the 11 cases both runs scored (G7). The suite has no llm_judge case: the gate fails on the
    // regression the demo is about, never also on an uncalibrated judge (issue 13).
    expect(r.stdout).toContain('pass-rate difference -81.8 pp (95% CI -94.9 to -42.6 pp), Newcombe hybrid score; run 2/11 vs baseline 11/11');
    expect(r.stdout).not.toContain('judge_uncalibrated');
    expect(r.stdout).toContain('verdict: FAIL');
    expect(r.stdout).toContain('gate exit code: 1');
    // The finding, read back from the service.
    expect(r.stdout).toMatch(/finding [0-9a-f-]{36} \(eval_regression\) for run demo-[0-9a-f]{8}-candidate/);
    expect(r.stdout).toContain('pass rate 2/11 vs baseline 11/11: difference -81.8 pp (95% CI -94.9 pp to -42.6 pp, Newcombe paired method 10)');
    // The scorecard of the two runs.
    expect(r.stdout).toMatch(/support-triage\s+agent\/demo-support-bot\s+2\s+18\.2% \(2\/11/);
    expect(r.stdout).toContain('npx evals serve');
    // The closing Next: block shows the path from an llm_judge suite to a passing gate.
    for (const step of ['JUDGE_PROVIDER=', 'npx evals label', 'npx evals calibrate --suite reply-tone', 'npx evals gate --suite examples/reply-tone.suite.yaml']) expect(r.stdout).toContain(step);
    // The bound for the demo on a fresh machine (fresh data directory included).
    expect(r.ms).toBeLessThan(60_000);
    // Its data stayed in the directory it was given.
    expect(fs.readdirSync(dataDir).sort()).toEqual(['.gitignore', 'bus', 'postgres', 'secret']);
  }, 120_000);
});
