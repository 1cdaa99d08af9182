import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claimDataDir, dataDirSecret, DataDirBusyError, liveOwner } from './data-dir';

describe('unit: the embedded data directory (docs/embedded.md)', () => {
  let root: string;

  beforeEach(() => {
    root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'evals-datadir-')), '.evals');
  });

  afterEach(() => {
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  });

  it('is created private, ignored by git, and claimed with the owner, its mode and (once listening) its URL', () => {
    const claim = claimDataDir(root, 'serve');
    expect(fs.statSync(root).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(path.join(root, '.gitignore'), 'utf8')).toBe('*\n');
    expect(JSON.parse(fs.readFileSync(path.join(root, 'owner.json'), 'utf8'))).toEqual({ pid: process.pid, mode: 'serve', url: null });
    claim.advertise('http://127.0.0.1:3000');
    expect(JSON.parse(fs.readFileSync(path.join(root, 'owner.json'), 'utf8'))).toEqual({ pid: process.pid, mode: 'serve', url: 'http://127.0.0.1:3000' });
    claim.release();
    expect(fs.existsSync(path.join(root, 'owner.json'))).toBe(false);
  });

  it('refuses a second claim while a live process holds it, this one included', () => {
    const claim = claimDataDir(root, 'command');
    expect(() => claimDataDir(root, 'serve')).toThrow(DataDirBusyError);
    claim.release();
    fs.writeFileSync(path.join(root, 'owner.json'), JSON.stringify({ pid: process.ppid, mode: 'serve', url: 'http://127.0.0.1:1' }));
    expect(() => claimDataDir(root, 'serve')).toThrow(`is open in process ${process.ppid} (serving http://127.0.0.1:1)`);
    expect(liveOwner(root)).toEqual({ pid: process.ppid, mode: 'serve', url: 'http://127.0.0.1:1' });
  });

  it("takes over a dead process's claim, and one naming this pid that this process does not hold (a restarted container)", () => {
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 12345, mode: 'serve', url: null }));
    claimDataDir(root, 'serve').release();
    fs.writeFileSync(path.join(root, 'owner.json'), JSON.stringify({ pid: process.pid, mode: 'serve', url: 'http://127.0.0.1:9' }));
    const claim = claimDataDir(root, 'serve');
    expect(JSON.parse(fs.readFileSync(path.join(root, 'owner.json'), 'utf8')).url).toBeNull();
    claim.release();
  });

  it('treats an unreadable owner.json as busy and says how to clear it', () => {
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'owner.json'), '{"pid":');
    expect(() => claimDataDir(root, 'serve')).toThrow('owner.json cannot be read');
  });

  it('generates the HMAC secret once (0600) and never replaces it', () => {
    fs.mkdirSync(root, { recursive: true });
    const first = dataDirSecret(root);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(fs.statSync(path.join(root, 'secret')).mode & 0o777).toBe(0o600);
    expect(dataDirSecret(root)).toBe(first);
    fs.writeFileSync(path.join(root, 'secret'), 'short\n');
    expect(() => dataDirSecret(root)).toThrow('holds no usable key');
    expect(fs.readFileSync(path.join(root, 'secret'), 'utf8')).toBe('short\n');
  });
});
