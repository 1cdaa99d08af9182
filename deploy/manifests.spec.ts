/**
 * Invariants of the deployment artifacts (deploy/, docs/deploy.md), checked at the parser level: Docker,
 * Compose and kubectl are not needed. Every YAML file under deploy/ is parsed (all documents), and the
 * JetStream streams and consumers are compared with libs/bus/src/topology.ts, the environment with the
 * apps' config.ts files and docs/configuration.md - so the manifests cannot drift from the code.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { commonConfigSpec, hmacConfigSpec } from '../libs/platform/src/config';
import { MAX_MESSAGE_BYTES } from '../libs/contracts/src/limits';
import { CONSUMERS, PRODUCTION_NAMES, STREAMS, streamConfig, streamOf, subjectOf, type ConsumerSpec } from '../libs/bus/src/topology';

const ROOT = path.resolve(__dirname, '..');
const DEPLOY = path.join(ROOT, 'deploy');
const K8S = path.join(DEPLOY, 'k8s');
const COMPOSE_DIR = path.join(DEPLOY, 'compose');

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed YAML, checked field by field

interface LoadedDoc {
  readonly file: string; // relative to the repository root
  readonly index: number;
  readonly doc: Json;
}

const rel = (file: string): string => path.relative(ROOT, file);
const read = (file: string): string => fs.readFileSync(file, 'utf8');

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(full);
    return [full];
  });
}

const yamlFiles = walk(DEPLOY).filter((f) => /\.ya?ml$/.test(f));

/** Parses every document of a file; parse errors are collected, not thrown, so one test lists them all. */
function parseFile(file: string): { docs: LoadedDoc[]; errors: string[] } {
  const errors: string[] = [];
  const docs: LoadedDoc[] = [];
  parseAllDocuments(read(file), { merge: true, prettyErrors: true }).forEach((document, index) => {
    for (const e of [...document.errors, ...document.warnings]) errors.push(`${rel(file)} (document ${index + 1}): ${e.message}`);
    if (document.errors.length > 0) return;
    const doc = document.toJS({ maxAliasCount: -1 });
    if (doc !== null && doc !== undefined) docs.push({ file: rel(file), index, doc });
  });
  return { docs, errors };
}

const parsed = new Map(yamlFiles.map((f) => [f, parseFile(f)]));
const docsOf = (file: string): LoadedDoc[] => parsed.get(file)?.docs ?? [];

// ---------------------------------------------------------------------------------------------- the code

/** The service apps (every app with a main, except the CLI). */
const SERVICE_APPS = fs
  .readdirSync(path.join(ROOT, 'apps'))
  .filter((name) => name !== 'cli' && fs.existsSync(path.join(ROOT, 'apps', name, 'src', 'main.ts')))
  .sort();

const COMMON_VARS = Object.values(commonConfigSpec(0)).map((v) => v.env);
const HMAC_VARS = Object.values(hmacConfigSpec).map((v) => v.env);

interface AppFacts {
  readonly vars: readonly string[];
  readonly defaultPort: number;
}

/** What an app reads, from its config.ts: its own `env: '...'` entries plus the shared specs it spreads. */
function appFacts(app: string): AppFacts {
  const source = read(path.join(ROOT, 'apps', app, 'src', 'config.ts'));
  const vars = new Set([...source.matchAll(/env:\s*'([A-Z0-9_]+)'/g)].map((m) => m[1]!));
  if (source.includes('commonConfigSpec')) COMMON_VARS.forEach((v) => vars.add(v));
  if (source.includes('hmacConfigSpec')) HMAC_VARS.forEach((v) => vars.add(v));
  const call = /commonConfigSpec\(\s*([A-Za-z0-9_]+)\s*[,)]/.exec(source)?.[1];
  if (call === undefined) throw new Error(`apps/${app}/src/config.ts: no commonConfigSpec(<port>) call to read the default port from`);
  const literal = /^\d[\d_]*$/.test(call) ? call : new RegExp(`const\\s+${call}\\s*=\\s*(\\d[\\d_]*)`).exec(source)?.[1];
  if (literal === undefined) throw new Error(`apps/${app}/src/config.ts: cannot resolve the default port ${call}`);
  return { vars: [...vars].sort(), defaultPort: Number(literal.replace(/_/g, '')) };
}

const APPS = new Map(SERVICE_APPS.map((app) => [app, appFacts(app)]));

/** Every variable a service process reads: config specs, plus any direct process.env access. */
function allVarsReadByServices(): string[] {
  const vars = new Set<string>([...APPS.values()].flatMap((a) => a.vars));
  const sources = [...SERVICE_APPS.map((a) => path.join(ROOT, 'apps', a, 'src')), path.join(ROOT, 'libs')]
    .flatMap(walk)
    .filter((f) => f.endsWith('.ts') && !/\.(spec|int-spec|e2e-spec|testing)\.ts$/.test(f));
  for (const file of sources) {
    const text = read(file);
    for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)|process\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)) vars.add((m[1] ?? m[2])!);
  }
  return [...vars].sort();
}

/** Variables in the table of docs/configuration.md. */
function documentedVars(): string[] {
  return [...read(path.join(ROOT, 'docs', 'configuration.md')).matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1]!);
}

// ---------------------------------------------------------------------------------------------- helpers

/** Go-style durations as NACK takes them: "168h", "2m", "1h30m", "45s". */
function durationSeconds(text: unknown): number {
  const s = String(text);
  if (!/^(\d+h)?(\d+m)?(\d+s)?$/.test(s) || s === '') throw new Error(`not a duration: ${s}`);
  let total = 0;
  for (const [, n, unit] of s.matchAll(/(\d+)([hms])/g)) total += Number(n) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  return total;
}

const NANOS_PER_SECOND = 1_000_000_000;

function parseEnvFile(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of read(file).split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** A secret value that is safe to commit: empty, or an obvious placeholder. */
const isPlaceholder = (value: string): boolean => value === '' || /change-me/.test(value);
const SECRET_NAME = /SECRET|PASSWORD|API_KEY|TOKEN|CREDENTIAL|PRIVATE/;

function problems(list: string[]): void {
  // One assertion listing every problem, so a failure says everything that is wrong at once.
  expect(list).toEqual([]);
}

// ---------------------------------------------------------------------------------------------- tests

describe('deploy/ - every YAML file parses', () => {
  it('finds the YAML files of compose and k8s', () => {
    expect(yamlFiles.map(rel)).toEqual(expect.arrayContaining(['deploy/compose/compose.yaml', 'deploy/k8s/base/kustomization.yaml', 'deploy/k8s/overlays/production/kustomization.yaml']));
  });

  it('parses every document of every YAML file without an error or warning', () => {
    problems([...parsed.values()].flatMap((p) => p.errors));
  });

  it('derived the service apps and their variables from the code', () => {
    expect(SERVICE_APPS).toEqual(expect.arrayContaining(['ingestion', 'read-model', 'regression', 'scoring-worker']));
    expect(APPS.get('scoring-worker')!.vars).toEqual(expect.arrayContaining(['DATABASE_URL', 'NATS_URL', 'EVALS_HMAC_SECRET', 'WORKER_MAX_BATCH']));
  });
});

describe('deploy/docker - the image', () => {
  const dockerfile = read(path.join(DEPLOY, 'docker', 'Dockerfile'));
  const entrypoint = read(path.join(DEPLOY, 'docker', 'entrypoint.sh'));
  const healthcheck = read(path.join(DEPLOY, 'docker', 'healthcheck.js'));

  it('is a multi-stage Node 20 build that compiles and prunes dev dependencies', () => {
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=node:20[^\s]*/);
    expect((dockerfile.match(/^FROM /gm) ?? []).length).toBeGreaterThanOrEqual(3);
    expect(dockerfile).toMatch(/npm ci/);
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('runs as a numeric non-root user, with a HEALTHCHECK on /health', () => {
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]!);
    expect(users.length).toBeGreaterThan(0);
    const last = users[users.length - 1]!;
    expect(last).toMatch(/^\d+(:\d+)?$/);
    expect(Number(last.split(':')[0])).toBeGreaterThan(0);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*healthcheck\.js/ms);
    expect(healthcheck).toMatch(/\/health`/);
  });

  it('starts any app by APP or by the first argument: node dist/apps/<app>/src/main.js', () => {
    expect(entrypoint).toMatch(/dist\/apps\/\$1\/src\/main\.js/);
    expect(entrypoint).toMatch(/APP="\$\{APP:-ingestion\}"/);
    expect(entrypoint).toMatch(/exec node "\$main"/);
    expect(entrypoint).toMatch(/dist\/libs\/persistence\/src\/migrate\.js/);
  });

  it("knows every app's default port in the health check", () => {
    problems(
      [...APPS].flatMap(([app, facts]) =>
        new RegExp(`'?${app}'?:\\s*${facts.defaultPort}\\b`).test(healthcheck) ? [] : [`healthcheck.js: no default port ${facts.defaultPort} for ${app}`],
      ),
    );
  });

  it("copies, before `npm run build`, every file of the repository the build script runs and what those require", () => {
    const build = dockerfile.split(/^FROM /m).find((stage) => /RUN npm run build/.test(stage)) ?? '';
    const copiedBefore = [...build.split(/RUN npm run build/)[0]!.matchAll(/^COPY\s+(?!--from)(?:--\S+\s+)*(.+?)\s+\S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    const script = (JSON.parse(read(path.join(ROOT, 'package.json'))) as { scripts: Record<string, string> }).scripts.build!;
    // The build's own files (`node scripts/x.js`), then every relative require of theirs, transitively.
    const needed = new Set<string>();
    const visit = (file: string) => {
      const rel = path.relative(ROOT, file);
      if (needed.has(rel) || !fs.existsSync(file)) return;
      needed.add(rel);
      for (const m of read(file).matchAll(/require\('(\.{1,2}\/[^']+)'\)/g)) {
        const base = path.resolve(path.dirname(file), m[1]!);
        // A require written into a generated file (bin/framework-bundle.js's parts) names nothing in the repository.
        const found = [base, `${base}.js`, path.join(base, 'index.js')].find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
        if (found) visit(found);
      }
    };
    for (const m of script.matchAll(/\bnode\s+(\S+\.js)/g)) visit(path.join(ROOT, m[1]!));
    expect([...needed]).toEqual(expect.arrayContaining(['scripts/build-framework-bundle.js', 'bin/framework-bundle.js']));
    problems([...needed].filter((f) => !copiedBefore.some((src) => f === src || f.startsWith(`${src}/`))).map((f) => `the build stage runs or loads ${f} but does not copy it before npm run build`));
  });

  it('has one ignore file (deploy/docker/.dockerignore is Dockerfile.dockerignore) that keeps what the build copies', () => {
    const ignoreFile = path.join(DEPLOY, 'docker', 'Dockerfile.dockerignore');
    expect(read(path.join(DEPLOY, 'docker', '.dockerignore'))).toBe(read(ignoreFile));
    const ignored = read(ignoreFile)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('!'));
    const copied = [...dockerfile.matchAll(/^COPY\s+(?!--from)(?:--\S+\s+)*(.+?)\s+\S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'apps', 'libs', 'deploy/docker/entrypoint.sh']));
    problems(
      copied.flatMap((src) => {
        if (!fs.existsSync(path.join(ROOT, src))) return [`Dockerfile copies ${src}, which does not exist`];
        const hit = ignored.find((pattern) => pattern === src || src.startsWith(`${pattern}/`));
        return hit ? [`Dockerfile copies ${src}, but the ignore file excludes it (${hit})`] : [];
      }),
    );
  });
});

describe('deploy/compose - the local cluster', () => {
  const composeFile = path.join(COMPOSE_DIR, 'compose.yaml');
  const compose: Json = docsOf(composeFile)[0]?.doc ?? {};
  const services: Record<string, Json> = compose.services ?? {};
  const envExample = parseEnvFile(path.join(COMPOSE_DIR, '.env.example'));
  const natsNodes = Object.entries(services).filter(([, s]) => String(s.image ?? '').startsWith('nats:'));
  const isOneShot = (s: Json): boolean => s.restart === 'no' || (Array.isArray(s.profiles) && s.profiles.length > 0);

  it('runs a three-node NATS JetStream cluster (nats:2.10-alpine), each node with its own volume', () => {
    expect(natsNodes.map(([name]) => name).sort()).toEqual(['nats-1', 'nats-2', 'nats-3']);
    const names = natsNodes.map(([name]) => name);
    problems(
      natsNodes.flatMap(([name, s]) => {
        const out: string[] = [];
        const command: string[] = (s.command ?? []).map(String);
        if (s.image !== 'nats:2.10-alpine') out.push(`${name}: image ${s.image}, expected nats:2.10-alpine`);
        if (!command.includes('-js') && !command.includes('--jetstream')) out.push(`${name}: JetStream is not enabled (-js)`);
        if (!command.some((c) => /^--cluster_name=\S+/.test(c))) out.push(`${name}: no --cluster_name`);
        if (!command.some((c) => /^--cluster=nats:\/\/[^:]+:6222$/.test(c))) out.push(`${name}: no cluster listener on 6222`);
        if (!command.includes(`--server_name=${name}`)) out.push(`${name}: --server_name is not ${name}`);
        const routes = command.find((c) => c.startsWith('--routes='))?.slice('--routes='.length).split(',') ?? [];
        const expected = names.map((n) => `nats://${n}:6222`).sort();
        if (JSON.stringify([...routes].sort()) !== JSON.stringify(expected)) out.push(`${name}: routes ${routes.join(',')} do not list every node (${expected.join(',')})`);
        const volumes: string[] = (s.volumes ?? []).map(String);
        if (!volumes.some((v) => /^[a-z0-9-]+:\/data$/.test(v) && (compose.volumes ?? {})[v.split(':')[0]!] !== undefined)) out.push(`${name}: no named volume on /data`);
        if (!volumes.some((v) => v.startsWith('./nats/nats.conf:'))) out.push(`${name}: nats.conf is not mounted`);
        if (!command.some((c) => c.startsWith('--config='))) out.push(`${name}: the mounted nats.conf is not used (--config)`);
        return out;
      }),
    );
    const dataVolumes = natsNodes.map(([, s]) => (s.volumes as string[]).find((v) => v.endsWith(':/data')));
    expect(new Set(dataVolumes).size).toBe(3);
  });

  it('raises max_payload to MAX_MESSAGE_BYTES (8 MiB) in the mounted nats.conf', () => {
    const conf = read(path.join(COMPOSE_DIR, 'nats', 'nats.conf'));
    expect(Number(/^max_payload:\s*(\d+)\s*$/m.exec(conf)?.[1])).toBe(MAX_MESSAGE_BYTES);
    expect(Number(/^max_pending:\s*(\d+)\s*$/m.exec(conf)?.[1])).toBeGreaterThan(MAX_MESSAGE_BYTES);
  });

  it('runs PostgreSQL 16 and Redis 7', () => {
    expect(String(services.postgres?.image)).toMatch(/^postgres:16/);
    expect(String(services.redis?.image)).toMatch(/^redis:7/);
  });

  it('has a health check on every service (explicitly disabled only for one-shot services)', () => {
    problems(
      Object.entries(services).flatMap(([name, s]) => {
        const hc = s.healthcheck;
        if (hc === undefined) return [`${name}: no healthcheck`];
        if (hc.disable === true) return isOneShot(s) ? [] : [`${name}: healthcheck disabled on a long-running service`];
        return Array.isArray(hc.test) && hc.test.length > 1 ? [] : [`${name}: healthcheck without a test`];
      }),
    );
  });

  it('has a service for every app, probing /health on its port, after NATS, PostgreSQL and the migration', () => {
    problems(
      [...APPS].flatMap(([app, facts]) => {
        const s = services[app];
        if (s === undefined) return [`compose: no service for app ${app}`];
        const out: string[] = [];
        const port = String(s.environment?.PORT ?? '');
        if (port !== String(facts.defaultPort)) out.push(`${app}: PORT ${port}, expected ${facts.defaultPort}`);
        if (String(s.command?.[0]) !== app) out.push(`${app}: command does not start ${app}`);
        const test = (s.healthcheck?.test ?? []).join(' ');
        if (!test.includes(`:${port}/health`)) out.push(`${app}: healthcheck does not GET :${port}/health`);
        const deps = s.depends_on ?? {};
        for (const [node] of natsNodes) if (deps[node]?.condition !== 'service_healthy') out.push(`${app}: does not wait for ${node} to be healthy`);
        if (deps.postgres?.condition !== 'service_healthy') out.push(`${app}: does not wait for postgres to be healthy`);
        if (deps.migrate?.condition !== 'service_completed_successfully') out.push(`${app}: does not wait for the migration to complete`);
        return out;
      }),
    );
  });

  it('scales the work-queue consumers and keeps regression single (see docs/deploy.md)', () => {
    expect(services['scoring-worker']?.deploy?.replicas).toBe(3);
    expect(services['read-model']?.deploy?.replicas).toBe(2);
    expect(services.regression?.deploy?.replicas ?? 1).toBe(1);
  });

  it('runs the migration once, first, and offers the CLI as a profile', () => {
    const migrate = services.migrate;
    expect(migrate?.command).toEqual(['migrate']);
    expect(migrate?.restart).toBe('no');
    expect(migrate?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(services.cli?.profiles).toEqual(['cli']);
    // Without a server the CLI would run its embedded default inside the container (docs/embedded.md).
    expect(services.cli?.environment).toMatchObject({ EVALS_SERVER: 'http://ingestion:3001', EVALS_READ_SERVER: 'http://read-model:3003', EVALS_REGRESSION_SERVER: 'http://regression:3004' });
  });

  it('gives every app and the migration the environment of .env.example', () => {
    problems(
      [...SERVICE_APPS, 'migrate'].flatMap((name) => {
        const files = (services[name]?.env_file ?? []).map((e: Json) => (typeof e === 'string' ? e : e.path));
        return files.includes('.env.example') ? [] : [`${name}: env_file does not include .env.example`];
      }),
    );
  });

  it('lists in .env.example every variable the apps read and every one of docs/configuration.md', () => {
    // A variable set per service (PORT) must then be set in every app service.
    const setEverywhere = (v: string): boolean => SERVICE_APPS.every((app) => services[app]?.environment?.[v] !== undefined);
    const wanted = [...new Set([...allVarsReadByServices(), ...documentedVars()])].sort();
    problems(wanted.filter((v) => !envExample.has(v) && !setEverywhere(v)).map((v) => `deploy/compose/.env.example: ${v} is missing`));
  });

  it('keeps only placeholders for secrets in .env.example', () => {
    const out: string[] = [];
    for (const [key, value] of envExample) if (SECRET_NAME.test(key) && !isPlaceholder(value)) out.push(`${key} looks like a real secret`);
    const url = new URL(envExample.get('DATABASE_URL') ?? 'postgres://x');
    if (!isPlaceholder(decodeURIComponent(url.password))) out.push('DATABASE_URL carries a password that is not a placeholder');
    // The local cluster boots with it: the worker refuses an HMAC key shorter than 32 characters.
    if ((envExample.get('EVALS_HMAC_SECRET') ?? '').length < 32) out.push('EVALS_HMAC_SECRET placeholder is shorter than 32 characters');
    problems(out);
  });
});

describe('deploy/k8s - Kustomize base and overlays', () => {
  const kustomizations = yamlFiles.filter((f) => f.startsWith(K8S) && path.basename(f) === 'kustomization.yaml');
  const base = path.join(K8S, 'base');

  /** Files a kustomization takes in, by role (directories in resources are other kustomizations). */
  function entries(kfile: string): { resources: string[]; patches: string[] } {
    const k = docsOf(kfile)[0]?.doc ?? {};
    const dir = path.dirname(kfile);
    const resources = (k.resources ?? []).map((r: string) => path.resolve(dir, r)).filter((r: string) => /\.ya?ml$/.test(r));
    const patches = (k.patches ?? []).filter((p: Json) => p.path).map((p: Json) => path.resolve(dir, p.path));
    return { resources, patches };
  }

  const baseFiles = entries(path.join(base, 'kustomization.yaml')).resources;
  const resources: LoadedDoc[] = baseFiles.flatMap(docsOf);
  const ofKind = (kind: string): Json[] => resources.filter((r) => r.doc.kind === kind).map((r) => r.doc);
  const find = (kind: string, name: string): Json | undefined => ofKind(kind).find((d) => d.metadata?.name === name);
  const deployments = ofKind('Deployment');
  const configMap = find('ConfigMap', 'evals-config');
  const secret = find('Secret', 'evals-secrets');

  const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
    selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

  it('references every file of base/ and overlays/ from a kustomization, and every referenced file exists', () => {
    const referenced = new Set(kustomizations.flatMap((k) => [k, ...Object.values(entries(k)).flat()]));
    const files = walk(K8S).filter((f) => /\.ya?ml$/.test(f) && (f.startsWith(base) || f.startsWith(path.join(K8S, 'overlays'))));
    problems([
      ...files.filter((f) => !referenced.has(f)).map((f) => `${rel(f)} is in no kustomization`),
      ...[...referenced].filter((f) => !fs.existsSync(f)).map((f) => `${rel(f)} is referenced but missing`),
    ]);
  });

  it('declares the namespace, the ConfigMap and the Secret template', () => {
    expect(find('Namespace', 'evals')).toBeDefined();
    expect(configMap).toBeDefined();
    expect(secret).toBeDefined();
    expect(docsOf(path.join(base, 'kustomization.yaml'))[0]?.doc.namespace).toBe('evals');
  });

  it('has a Deployment and a Service for every app', () => {
    problems(
      SERVICE_APPS.flatMap((app) => {
        const d = find('Deployment', app);
        if (!d) return [`no Deployment for app ${app}`];
        const svc = find('Service', app);
        if (!svc) return [`no Service for app ${app}`];
        const out: string[] = [];
        if (!matches(svc.spec?.selector, d.spec?.template?.metadata?.labels)) out.push(`Service ${app} does not select the pods of Deployment ${app}`);
        if (!(svc.spec?.ports ?? []).some((p: Json) => p.targetPort === 'http')) out.push(`Service ${app} does not target the http port`);
        const container = (d.spec?.template?.spec?.containers ?? []).find((c: Json) => c.name === app);
        if (!container) out.push(`Deployment ${app}: no container named ${app}`);
        else if (!(container.args ?? []).includes(app)) out.push(`Deployment ${app}: the container does not start ${app} (args)`);
        return out;
      }),
    );
  });

  it('gives every Deployment /health probes on its container port, resources, and a non-root read-only container', () => {
    expect(deployments.length).toBeGreaterThanOrEqual(SERVICE_APPS.length);
    problems(
      deployments.flatMap((d) => {
        const name = d.metadata?.name;
        const pod = d.spec?.template?.spec ?? {};
        const out: string[] = [];
        if (!matches(d.spec?.selector?.matchLabels, d.spec?.template?.metadata?.labels)) out.push(`${name}: the selector does not match the pod labels`);
        for (const c of pod.containers ?? []) {
          const where = `Deployment ${name}, container ${c.name}`;
          const ports: Json[] = c.ports ?? [];
          const http = ports.find((p) => p.name === 'http') ?? ports[0];
          if (!http) {
            out.push(`${where}: no container port`);
            continue;
          }
          const portEnv = (c.env ?? []).find((e: Json) => e.name === 'PORT')?.value;
          if (String(portEnv) !== String(http.containerPort)) out.push(`${where}: PORT=${portEnv} but the container port is ${http.containerPort}`);
          const facts = APPS.get(name);
          if (facts && http.containerPort !== facts.defaultPort) out.push(`${where}: port ${http.containerPort}, the app's default is ${facts.defaultPort}`);
          // Readiness and liveness are required; a startup probe, when there is one, checks the same.
          for (const probe of ['readinessProbe', 'livenessProbe', ...(c.startupProbe ? ['startupProbe'] : [])]) {
            const get = c[probe]?.httpGet;
            if (!get) out.push(`${where}: no ${probe} (httpGet)`);
            else {
              if (get.path !== '/health') out.push(`${where}: ${probe} path ${get.path}, expected /health`);
              const port = typeof get.port === 'string' ? ports.find((p) => p.name === get.port)?.containerPort : get.port;
              if (port !== http.containerPort) out.push(`${where}: ${probe} port ${get.port} is not the container port ${http.containerPort}`);
            }
          }
          for (const kind of ['requests', 'limits']) {
            for (const r of ['cpu', 'memory']) if (c.resources?.[kind]?.[r] === undefined) out.push(`${where}: no resources.${kind}.${r}`);
          }
          const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
          if (nonRoot !== true) out.push(`${where}: runAsNonRoot is not true`);
          if (c.securityContext?.readOnlyRootFilesystem !== true) out.push(`${where}: readOnlyRootFilesystem is not true`);
          if (c.securityContext?.allowPrivilegeEscalation !== false) out.push(`${where}: allowPrivilegeEscalation is not false`);
          if (!(c.envFrom ?? []).some((e: Json) => e.configMapRef?.name === 'evals-config')) out.push(`${where}: no envFrom evals-config`);
        }
        return out;
      }),
    );
  });

  it('provides every variable an app needs from the ConfigMap, the Secret or the container', () => {
    const configKeys = new Set(Object.keys(configMap?.data ?? {}));
    const secretKeys = new Set(Object.keys({ ...(secret?.stringData ?? {}), ...(secret?.data ?? {}) }));
    problems(
      [...APPS].flatMap(([app, facts]) => {
        const c = (find('Deployment', app)?.spec?.template?.spec?.containers ?? []).find((x: Json) => x.name === app);
        if (!c) return [];
        const env: Json[] = c.env ?? [];
        const out: string[] = [];
        for (const v of facts.vars) {
          if (!configKeys.has(v) && !env.some((e) => e.name === v)) out.push(`${app}: ${v} is set neither in evals-config nor in the container`);
        }
        for (const e of env) {
          const ref = e.valueFrom?.secretKeyRef;
          // Issue 27: DATABASE_URL comes from the app's own Secret (its role), everything else from evals-secrets.
          const expected = e.name === 'DATABASE_URL' ? `evals-${app}-database` : 'evals-secrets';
          const keys = e.name === 'DATABASE_URL' ? new Set(Object.keys(find('Secret', expected)?.stringData ?? {})) : secretKeys;
          if (ref && (ref.name !== expected || !keys.has(ref.key))) out.push(`${app}: ${e.name} refers to ${ref.name}/${ref.key}, which the Secret template does not have`);
          if (SECRET_NAME.test(e.name) || e.name === 'DATABASE_URL') {
            if (!ref) out.push(`${app}: ${e.name} is not taken from the Secret`);
          }
        }
        return out;
      }),
    );
  });

  it('caps every app\'s V8 heap well under its container\'s memory limit, as compose and the benchmarks do (issue 15)', () => {
    const mib = (q: string): number => {
      const m = /^(\d+)(Mi|Gi)$/.exec(String(q));
      return m ? Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1) : NaN;
    };
    const composeServices: Record<string, Json> = (docsOf(path.join(COMPOSE_DIR, 'compose.yaml'))[0]?.doc ?? {}).services ?? {};
    problems(
      [...APPS.keys()].flatMap((app) => {
        const c = (find('Deployment', app)?.spec?.template?.spec?.containers ?? []).find((x: Json) => x.name === app);
        if (!c) return [];
        const options: string | undefined = (c.env ?? []).find((e: Json) => e.name === 'NODE_OPTIONS')?.value;
        const cap = Number(/--max-old-space-size=(\d+)/.exec(options ?? '')?.[1]);
        const limit = mib(c.resources?.limits?.memory);
        const out: string[] = [];
        if (!Number.isFinite(cap)) out.push(`${app}: no NODE_OPTIONS --max-old-space-size`);
        // The rest of the process (code, young generation, buffers, native memory) needs room too.
        else if (!(cap * 2 <= limit)) out.push(`${app}: a heap of ${cap} MB is more than half of the ${limit} Mi limit`);
        const composed = composeServices[app]?.environment?.NODE_OPTIONS;
        if (composed !== options) out.push(`${app}: compose sets NODE_OPTIONS ${composed}, k8s ${options}`);
        return out;
      }),
    );
  });

  it('keeps secrets out of the ConfigMap', () => {
    problems(Object.keys(configMap?.data ?? {}).filter((k) => SECRET_NAME.test(k) || k === 'DATABASE_URL').map((k) => `evals-config holds ${k}, a secret`));
  });

  it('has a PodDisruptionBudget for every Deployment', () => {
    const pdbs = ofKind('PodDisruptionBudget');
    problems(
      deployments
        .filter((d) => !pdbs.some((p) => matches(p.spec?.selector?.matchLabels, d.spec?.template?.metadata?.labels)))
        .map((d) => `no PodDisruptionBudget selects Deployment ${d.metadata?.name}`),
    );
    // A PDB of minAvailable 1 on a single replica would block every node drain.
    problems(
      pdbs.flatMap((p) => {
        const d = deployments.find((x) => matches(p.spec?.selector?.matchLabels, x.spec?.template?.metadata?.labels));
        return d && d.spec?.replicas === 1 && p.spec?.minAvailable !== undefined ? [`PDB ${p.metadata?.name}: minAvailable on a single replica blocks drains`] : [];
      }),
    );
  });

  it('autoscales the scoring worker (CPU, 2 to 20) and leaves its replica count to the HPA', () => {
    const hpas = ofKind('HorizontalPodAutoscaler');
    expect(hpas).toHaveLength(1);
    const hpa = hpas[0];
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'scoring-worker' });
    expect(find('Deployment', 'scoring-worker')).toBeDefined();
    expect(hpa.spec.minReplicas).toBe(2);
    expect(hpa.spec.maxReplicas).toBe(20);
    expect(hpa.spec.metrics).toEqual([expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) })]);
    expect(find('Deployment', 'scoring-worker').spec.replicas).toBeUndefined();
  });

  it('runs regression as one replica that is never doubled by a rollout', () => {
    const d = find('Deployment', 'regression');
    expect(d?.spec?.replicas).toBe(1);
    expect(d?.spec?.strategy?.type).toBe('Recreate');
  });

  it('has a migration Job running dist/libs/persistence/src/migrate.js, non-root, with resources', () => {
    const jobs = ofKind('Job');
    const job = jobs.find((j) => (j.spec?.template?.spec?.containers ?? []).some((c: Json) => [...(c.command ?? []), ...(c.args ?? [])].join(' ').includes('dist/libs/persistence/src/migrate.js')));
    expect(job).toBeDefined();
    const pod = job.spec.template.spec;
    const c = pod.containers[0];
    expect(pod.restartPolicy).toMatch(/^(Never|OnFailure)$/);
    expect(c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot).toBe(true);
    expect(c.resources?.requests && c.resources?.limits).toBeTruthy();
    expect(c.env.find((e: Json) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef?.name).toBe('evals-secrets');
    expect(configMap?.data?.EVALS_MIGRATE).toBe('job');
  });

  describe('JetStream streams (NACK) equal libs/bus/src/topology.ts', () => {
    const streams = ofKind('Stream').filter((s) => s.apiVersion === 'jetstream.nats.io/v1beta2');

    it('declares exactly the streams of STREAMS', () => {
      expect(ofKind('Stream')).toHaveLength(streams.length);
      expect(streams.map((s) => s.spec?.name).sort()).toEqual(STREAMS.map((s) => streamOf(PRODUCTION_NAMES, s.name)).sort());
    });

    it.each(STREAMS.map((s) => [s.name, s] as const))('%s: subjects, retention, limits, replicas 3, file storage', (_name, spec) => {
      const expected = streamConfig(PRODUCTION_NAMES, spec, { replicas: 3, storage: 'file', duplicateWindowSeconds: 120 });
      const s = streams.find((x) => x.spec?.name === expected.name)?.spec;
      expect(s).toBeDefined();
      expect([...s.subjects].sort()).toEqual([...expected.subjects!].sort());
      expect(s.retention).toBe(expected.retention);
      expect(s.storage).toBe(expected.storage);
      expect(s.replicas).toBe(3);
      expect(s.discard).toBe(expected.discard);
      expect(s.description).toBe(expected.description);
      expect(durationSeconds(s.maxAge) * NANOS_PER_SECOND).toBe(expected.max_age);
      expect(durationSeconds(s.duplicateWindow)).toBe(120);
      expect(durationSeconds(s.duplicateWindow) * NANOS_PER_SECOND).toBe(expected.duplicate_window);
      expect(Number.isInteger(s.maxBytes) && s.maxBytes > 0).toBe(true);
      expect(s.maxMsgSize).toBe(MAX_MESSAGE_BYTES);
    });

    it('keeps the work queues as work queues and the event streams for 7 and 14 days', () => {
      const by = (name: string): Json => streams.find((s) => s.spec?.name === name)?.spec ?? {};
      expect(by('EVALS_INBOUND').retention).toBe('workqueue');
      expect(by('EVALS_WORK').retention).toBe('workqueue');
      expect([by('EVALS_EVENTS').retention, durationSeconds(by('EVALS_EVENTS').maxAge)]).toEqual(['limits', 7 * 86400]);
      expect([by('EVALS_OUTBOUND').retention, durationSeconds(by('EVALS_OUTBOUND').maxAge)]).toEqual(['limits', 14 * 86400]);
    });
  });

  describe('JetStream consumers (NACK) equal CONSUMERS', () => {
    const consumers = ofKind('Consumer').filter((c) => c.apiVersion === 'jetstream.nats.io/v1beta2');

    it('declares exactly the durable consumers of CONSUMERS', () => {
      expect(consumers.map((c) => c.spec?.durableName).sort()).toEqual(Object.values(CONSUMERS).map((c) => c.durable).sort());
    });

    it.each(Object.values(CONSUMERS).map((c) => [c.durable, c as ConsumerSpec] as const))('%s: stream, filter, ack explicit, ack wait, unlimited deliveries', (_durable, spec) => {
      const c = consumers.find((x) => x.spec?.durableName === spec.durable)?.spec;
      expect(c).toBeDefined();
      expect(c.streamName).toBe(streamOf(PRODUCTION_NAMES, spec.stream));
      expect(c.filterSubject).toBe(spec.filterSubject ? subjectOf(PRODUCTION_NAMES, spec.filterSubject) : undefined);
      expect(c.ackPolicy).toBe('explicit');
      expect(c.deliverPolicy).toBe('all');
      // ensureConsumer(): the server redelivers without limit, the code dead-letters after deadLetterAfter.
      expect(c.maxDeliver).toBe(-1);
      expect(c.maxAckPending).toBe(10_000);
      expect(durationSeconds(c.ackWait)).toBe(spec.ackWaitSeconds);
      expect(c.description).toContain(`after ${spec.deadLetterAfter} deliveries`);
    });
  });

  describe('overlays', () => {
    const overlays = kustomizations.filter((k) => k.includes(`${path.sep}overlays${path.sep}`));

    it('patch only resources that exist in the base, keeping requests and limits together', () => {
      expect(overlays.length).toBeGreaterThan(0);
      problems(
        overlays.flatMap((k) =>
          entries(k).patches.flatMap(docsOf).flatMap(({ file, doc }) => {
            const out: string[] = [];
            if (!find(doc.kind, doc.metadata?.name)) out.push(`${file}: patches ${doc.kind} ${doc.metadata?.name}, which the base does not have`);
            for (const c of doc.spec?.template?.spec?.containers ?? []) {
              if (c.resources && !(c.resources.requests && c.resources.limits)) out.push(`${file}: ${c.name} patches requests or limits, not both`);
            }
            return out;
          }),
        ),
      );
    });

    it('production pins an image, deletes the placeholder Secret and keeps the HPA at most 20', () => {
      const kfile = path.join(K8S, 'overlays', 'production', 'kustomization.yaml');
      const k = docsOf(kfile)[0]!.doc;
      const image = (k.images ?? []).find((i: Json) => i.name === 'evals');
      expect(image).toBeDefined();
      expect(image.digest ?? image.newTag).toBeDefined();
      expect(['latest', 'local']).not.toContain(image.newTag);
      const patches = entries(kfile).patches.flatMap(docsOf).map((d) => d.doc);
      expect(patches).toContainEqual(expect.objectContaining({ $patch: 'delete', kind: 'Secret', metadata: { name: 'evals-secrets' } }));
      for (const p of patches.filter((x) => x.kind === 'HorizontalPodAutoscaler')) expect(p.spec.maxReplicas).toBeLessThanOrEqual(20);
    });
  });
});

describe('secrets are placeholders everywhere under deploy/', () => {
  it('no Secret carries a value that looks real', () => {
    const secrets = [...parsed.values()].flatMap((p) => p.docs).filter((d) => d.doc.kind === 'Secret');
    expect(secrets.length).toBeGreaterThan(0);
    problems(
      secrets.flatMap(({ file, doc }) => {
        const values: Array<[string, string]> = [
          ...Object.entries<string>(doc.stringData ?? {}).map(([k, v]) => [k, String(v)] as [string, string]),
          ...Object.entries<string>(doc.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString('utf8')] as [string, string]),
        ];
        return values.filter(([, v]) => !isPlaceholder(v)).map(([k]) => `${file}: Secret ${doc.metadata?.name} key ${k} is not a placeholder (use change-me)`);
      }),
    );
  });

  it('every YAML value named like a secret is a placeholder', () => {
    const out: string[] = [];
    const visit = (node: Json, file: string, trail: string): void => {
      if (Array.isArray(node)) node.forEach((n, i) => visit(n, file, `${trail}[${i}]`));
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (SECRET_NAME.test(k) && (typeof v === 'string' || typeof v === 'number') && !isPlaceholder(String(v))) out.push(`${file}: ${trail}.${k}`);
          visit(v, file, `${trail}.${k}`);
        }
      }
    };
    for (const p of parsed.values()) for (const d of p.docs) visit(d.doc, d.file, `#${d.index + 1}`);
    problems(out);
  });
});
