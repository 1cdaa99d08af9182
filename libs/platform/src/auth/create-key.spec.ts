import { KEYS_USAGE, main, parseKeysArgs, runKeysCommand, UsageError } from './create-key';

describe('the keys command: arguments', () => {
  it('parses create, revoke and list', () => {
    expect(parseKeysArgs(['--tier', 'admin', '--name', 'ops'])).toEqual({ kind: 'create', tier: 'admin', name: 'ops', project: 'default', createdBy: 'keys-command', json: false });
    expect(parseKeysArgs(['--tier=viewer', '--name=grafana', '--created-by', 'alice', '--json'])).toEqual({ kind: 'create', tier: 'viewer', name: 'grafana', project: 'default', createdBy: 'alice', json: true });
    // Issue 30: a key of a project, a platform key, a project.
    expect(parseKeysArgs(['--tier', 'operator', '--name', 'ci', '--project', 'team-a'])).toMatchObject({ kind: 'create', project: 'team-a' });
    expect(parseKeysArgs(['--tier', 'admin', '--name', 'ops', '--platform'])).toMatchObject({ kind: 'create', project: null });
    expect(parseKeysArgs(['--create-project', 'team-a', '--name', 'Team A'])).toEqual({ kind: 'create-project', id: 'team-a', name: 'Team A', createdBy: 'keys-command', json: false });
    expect(parseKeysArgs(['--list', '--project', 'team-a'])).toEqual({ kind: 'list', all: false, project: 'team-a', json: false });
    expect(parseKeysArgs(['--revoke', '0123456789abcdef'])).toEqual({ kind: 'revoke', id: '0123456789abcdef', json: false });
    expect(parseKeysArgs(['--list', '--all'])).toEqual({ kind: 'list', all: true, json: false });
    expect(parseKeysArgs([])).toEqual({ kind: 'help' });
    expect(parseKeysArgs(['--help'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['--tier', 'root', '--name', 'x'], /--tier must be one of/],
    [['--tier', 'admin'], /--name is required/],
    [['--tier', 'admin', '--name'], /--name needs a value/],
    [['--revoke', 'x', '--list'], /choose one/],
    [['--frobnicate'], /unknown option/],
    [['ops'], /unexpected argument/],
    [['--tier', 'admin', '--name', 'x', '--project', 'Team A'], /--project must be a project id/],
    [['--tier', 'admin', '--name', 'x', '--project', 'a', '--platform'], /not both/],
    [['--create-project', 'a:b'], /--create-project must be a project id/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseKeysArgs(argv)).toThrow(UsageError);
    expect(() => parseKeysArgs(argv)).toThrow(message);
  });

  it('exits 2 on bad usage or configuration before touching a database', async () => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => err.push(t) };
    expect(await main(['--tier', 'root', '--name', 'x'], {}, io)).toBe(2);
    expect(await main(['--tier', 'admin', '--name', 'x'], { DATABASE_URL: 'mysql://x' }, io)).toBe(2);
    expect(err.join('\n')).toMatch(/DATABASE_URL/);
  });

  it('prints the usage with examples', async () => {
    const out: string[] = [];
    expect(await runKeysCommand({ kind: 'help' }, { query: async () => [] }, '', { out: (t) => out.push(t), err: () => undefined })).toBe(0);
    expect(out.join('')).toBe(KEYS_USAGE);
    expect(KEYS_USAGE).toMatch(/examples:/);
  });
});
