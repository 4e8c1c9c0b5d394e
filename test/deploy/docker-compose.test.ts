/**
 * docker-compose.yml: `docker compose config -q` where the compose plugin exists; always, a parse of the
 * file (anchors and merge keys resolved, ${VAR:-default} interpolated with the defaults, the required secrets
 * given test values) checking that every service gets every variable it requires and that the values pass its
 * own config schema, and that no secret has a default.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { BUS_SERVICES } from '@vision/shared';
import {
  SERVICE_PORTS,
  SERVICES,
  type ServiceName,
  repoRoot,
  requiredVariables,
  validateEnv,
} from './deploy-support';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string };
  volumes?: (
    | string
    | { type: string; source: string; target: string; read_only?: boolean; volume?: { subpath?: string } }
  )[];
  ports?: string[];
  read_only?: boolean;
  stop_grace_period?: string;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** The services with a database schema, each with its own login (inference: its video jobs, shared by replicas). */
const DB_SERVICES: ServiceName[] = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'];

const composePath = path.join(repoRoot, 'docker-compose.yml');
const composeText = readFileSync(composePath, 'utf8');

/** The secrets an operator must set (the file's header lists them); test values, URL-safe like the documented ones. */
const SECRETS: Record<string, string> = Object.fromEntries(
  [
    'TASKS_ADMIN_TOKEN',
    'POSTGRES_PASSWORD',
    ...DB_SERVICES.map((s) => `POSTGRES_${s.toUpperCase()}_PASSWORD`),
    'S3_ACCESS_KEY',
    'S3_SECRET_KEY',
    'KAFKA_ADMIN_PASSWORD',
    ...BUS_SERVICES.map((s) => `KAFKA_${s.toUpperCase()}_PASSWORD`),
    'GRAFANA_ADMIN_PASSWORD',
  ].map((name) => [name, `test-${name.toLowerCase().replace(/_/g, '-')}-0123456789abcdef`]),
);

/**
 * Compose interpolation with a shell environment holding only `env`: ${X:-d} and ${X-d} give d when X is unset,
 * ${X:?m} fails when it is, ${X} gives "", $$ gives $.
 */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
    (m, name: string, op, arg) => {
      if (m === '$$') return '$';
      if (env[name] !== undefined) return env[name];
      if (op === ':-' || op === '-') return arg as string;
      if (op === ':?' || op === '?') throw new Error(`required variable without value: ${m}`);
      return '';
    },
  );
}

const compose = parse(interpolate(composeText, SECRETS), { merge: true }) as ComposeFile;
const PORTS = SERVICE_PORTS;

const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(
    Object.entries(compose.services[name].environment ?? {})
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, String(v)]),
  );

// Without the compose plugin this check shows as skipped (never as a pass); the parse tests below still run.
const hasCompose = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
(hasCompose ? test : test.skip)(
  'docker compose config -q accepts the file (needs the compose plugin)',
  () => {
    const r = spawnSync('docker', ['compose', '-f', composePath, 'config', '-q'], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, ...SECRETS },
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  },
);

describe.each(SERVICES)('%s', (name) => {
  const svc = compose.services[name];
  test('runs its own entry point from the project image, read-only with a /tmp', () => {
    expect(svc).toBeDefined();
    const command = Array.isArray(svc.command) ? svc.command : String(svc.command).split(/\s+/);
    expect(command).toEqual(['node', `services/${name}/dist/main.js`]);
    expect(svc.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
    expect(svc.read_only).toBe(true);
  });
  test('gets every variable it requires in distributed mode, and the values pass its schema', () => {
    const env = envOf(name);
    const missing = requiredVariables(name).filter((v) => !env[v]);
    expect(missing).toEqual([]);
    expect(env.VISION_MODE).toBe('distributed');
    expect(() => validateEnv(name, env)).not.toThrow();
  });
  test('peer URLs name compose services and their ports', () => {
    for (const [key, value] of Object.entries(envOf(name))) {
      const m = /^(TASKS|QUOTA|RESULTS|IMAGES|INFERENCE)_URL$/.exec(key);
      if (!m) continue;
      const peer = m[1].toLowerCase() as ServiceName;
      expect(new URL(value)).toMatchObject({ hostname: peer, port: String(PORTS[peer]) });
      expect(compose.services[peer]).toBeDefined();
    }
  });
  test('has a readiness healthcheck on its own port', () => {
    const check = JSON.stringify(svc.healthcheck?.test);
    expect(check).toContain(`127.0.0.1:${PORTS[name]}/readyz`);
  });
});

test('depends_on names existing services with conditions that they can meet', () => {
  for (const [name, svc] of Object.entries(compose.services)) {
    for (const [dep, { condition }] of Object.entries(svc.depends_on ?? {})) {
      const target = compose.services[dep];
      expect({ name, dep, exists: Boolean(target) }).toEqual({ name, dep, exists: true });
      expect(['service_started', 'service_healthy', 'service_completed_successfully']).toContain(condition);
      if (condition === 'service_healthy')
        expect({ dep, healthcheck: Boolean(target.healthcheck) }).toEqual({ dep, healthcheck: true });
    }
  }
});

test('no secret has a default: each one is required, and compose refuses to start without it', () => {
  for (const name of Object.keys(SECRETS)) {
    const uses = [...composeText.matchAll(new RegExp(`\\$\\{${name}([^}]*)\\}`, 'g'))].map((m) => m[1]);
    expect({ name, used: uses.length > 0 }).toEqual({ name, used: true });
    for (const use of uses) expect({ name, use }).toEqual({ name, use: expect.stringMatching(/^:\?/) });
    const { [name]: _unset, ...others } = SECRETS;
    expect(() => interpolate(composeText, others)).toThrow(`required variable without value: \${${name}:?`);
  }
  // Nothing secret-looking is spelled out in the file itself.
  expect(composeText).not.toMatch(/change-me|dev-password|PASSWORD: [^$]|:-admin\}/);
});

test('infrastructure: KRaft Kafka, Postgres, Redis, S3, Jaeger with OTLP; gateway on 8080', () => {
  const kafka = compose.services.kafka;
  expect(kafka.environment?.KAFKA_PROCESS_ROLES).toBe('broker,controller');
  expect(JSON.stringify(kafka)).not.toMatch(/zookeeper/i);
  for (const infra of ['kafka', 'postgres', 'redis', 's3', 'jaeger'])
    expect(compose.services[infra].healthcheck).toBeDefined();
  // Jaeger v2 on deploy/compose/jaeger.yaml: its OTLP/HTTP receiver is where the services export, on every
  // interface of the container (the image sets JAEGER_LISTEN_HOST=0.0.0.0, the file's default too), and its query
  // API is the published 16686.
  const jaegerConfig = parse(readFileSync(path.join(repoRoot, 'deploy/compose/jaeger.yaml'), 'utf8')) as {
    receivers: { otlp: { protocols: Record<'grpc' | 'http', { endpoint: string }> } };
    extensions: { jaeger_query: { http: { endpoint: string } } };
  };
  const withDefaults = (endpoint: string): string => endpoint.replace(/\$\{env:[A-Z_]+:-([^}]*)\}/g, '$1');
  expect(withDefaults(jaegerConfig.receivers.otlp.protocols.http.endpoint)).toBe('0.0.0.0:4318');
  expect(withDefaults(jaegerConfig.receivers.otlp.protocols.grpc.endpoint)).toBe('0.0.0.0:4317');
  expect(withDefaults(jaegerConfig.extensions.jaeger_query.http.endpoint)).toBe('0.0.0.0:16686');
  expect(compose.services.jaeger.ports).toEqual(['127.0.0.1:16686:16686']);
  for (const name of SERVICES) expect(envOf(name).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://jaeger:4318');
  expect(compose.services.gateway.ports).toEqual(['8080:8080']);
});

test('one-shot init creates the topics and the bucket and runs the migrations before the services', () => {
  // kafka-init provisions the bus with scripts/bus-principals.js: the topics (TOPICS), and each bus service's user
  // with its password, signed in as the super user.
  const kafkaInit = compose.services['kafka-init'];
  expect(kafkaInit.command).toEqual(['node', 'scripts/bus-principals.js']);
  const initEnv = kafkaInit.environment as Record<string, string>;
  for (const s of BUS_SERVICES)
    expect(initEnv[`KAFKA_${s.toUpperCase()}_PASSWORD`]).toBe(SECRETS[`KAFKA_${s.toUpperCase()}_PASSWORD`]);
  expect(initEnv.KAFKA_SASL_PASSWORD).toBe(SECRETS.KAFKA_ADMIN_PASSWORD);
  // Each bus service signs in as its own user with its own password, and none holds the super user's.
  for (const s of BUS_SERVICES) {
    const env = compose.services[s].environment as Record<string, string>;
    expect([env.KAFKA_SASL_USERNAME, env.KAFKA_SASL_PASSWORD]).toEqual([
      `vision-${s}`,
      SECRETS[`KAFKA_${s.toUpperCase()}_PASSWORD`],
    ]);
  }
  expect(
    (compose.services.gateway.environment as Record<string, string>).KAFKA_SASL_PASSWORD,
  ).toBeUndefined();
  expect(JSON.stringify(compose.services['s3-init'].command)).toContain('s3.bucket.create -name $S3_BUCKET');
  expect(compose.services.migrate.command).toEqual(['node', 'scripts/migrate.js']);
  // Whoever talks to Kafka or S3 starts after the topics and the bucket exist (directly or through a peer).
  const after = (name: string, seen = new Set<string>()): Set<string> => {
    for (const dep of Object.keys(compose.services[name].depends_on ?? {}))
      if (!seen.has(dep)) {
        seen.add(dep);
        after(dep, seen);
      }
    return seen;
  };
  for (const name of SERVICES) {
    const env = envOf(name);
    if (env.KAFKA_BROKERS)
      expect({ name, topics: after(name).has('kafka-init') }).toEqual({ name, topics: true });
    if (env.S3_ENDPOINT) expect({ name, bucket: after(name).has('s3-init') }).toEqual({ name, bucket: true });
  }
  for (const name of ['inference', 'quota', 'tasks', 'results', 'images', 'gateway'])
    expect(compose.services[name].depends_on?.migrate).toEqual({
      condition: 'service_completed_successfully',
    });
});

test("each service logs in to the database as itself; only migrate has the owner's login, and grants each its schema", () => {
  const owner = new URL(envOf('migrate').DATABASE_URL);
  expect(owner.username).toBe('vision');
  const logins = Object.fromEntries(
    SERVICES.map((name) => {
      const url = envOf(name).DATABASE_URL;
      return [name, url && `${new URL(url).username}:${decodeURIComponent(new URL(url).password)}`];
    }),
  );
  expect(logins).toEqual(
    Object.fromEntries(
      DB_SERVICES.map((s) => [s, `vision_${s}:${SECRETS[`POSTGRES_${s.toUpperCase()}_PASSWORD`]}`]),
    ),
  );
  for (const [name, svc] of Object.entries(compose.services))
    if (name !== 'migrate' && name !== 'db-logins' && name !== 'postgres')
      expect({
        name,
        owner: JSON.stringify(svc.environment ?? {}).includes(SECRETS.POSTGRES_PASSWORD),
      }).toEqual({
        name,
        owner: false,
      });
  expect(envOf('migrate').DATABASE_SERVICE_ROLES).toBe(DB_SERVICES.map((s) => `${s}:vision_${s}`).join(','));
  // db-logins makes each role (with its password from the environment) before migrate grants it.
  expect(compose.services.migrate.depends_on?.['db-logins']).toEqual({
    condition: 'service_completed_successfully',
  });
  const made = envOf('db-logins');
  for (const s of DB_SERVICES) expect(made[`POSTGRES_${s.toUpperCase()}_PASSWORD`]).toBeDefined();
  expect(JSON.stringify(compose.services['db-logins'].command)).toContain(
    'for s in gateway tasks quota results images inference;',
  );
  // As the superuser: no service login connects to the server's own databases.
  for (const db of ['postgres', 'template1'])
    expect(JSON.stringify(compose.services['db-logins'].command)).toContain(
      `REVOKE CONNECT ON DATABASE ${db} FROM PUBLIC`,
    );
});

test('each service mounts only its own subdirectory of the identity volume, made by identity-init first', () => {
  const init = compose.services['identity-init'];
  expect(init.command).toEqual(['node', 'scripts/identity-keys.js', '/identity']);
  expect(init.volumes).toContain('identity:/identity');
  expect(compose.volumes).toHaveProperty('identity');
  for (const name of SERVICES) {
    const svc = compose.services[name];
    const mounts = (svc.volumes ?? []).filter((v) => typeof v !== 'string' && v.source === 'identity');
    expect({ name, mounts }).toEqual({
      name,
      mounts: [
        {
          type: 'volume',
          source: 'identity',
          target: envOf(name).VISION_IDENTITY_DIR,
          read_only: true,
          volume: { subpath: name },
        },
      ],
    });
    expect(svc.depends_on?.['identity-init']).toEqual({ condition: 'service_completed_successfully' });
  }
});

test("inference is given the time to write its jobs' checkpoints when it is stopped", () => {
  // Docker's default is 10 s; the answers in flight drain first (SHUTDOWN_DRAIN_MS), then every job is written.
  const grace = /^(\d+)s$/.exec(compose.services.inference.stop_grace_period ?? '');
  expect(Number(grace?.[1])).toBeGreaterThanOrEqual(30);
});

test('inference reads its models from the models volume, mounted read-only where VISION_MODELS_DIR points', () => {
  const inference = compose.services.inference;
  const dir = envOf('inference').VISION_MODELS_DIR;
  expect(inference.volumes).toContain(`models:${dir}:ro`);
  expect(compose.volumes).toHaveProperty('models');
  expect(compose.services['models-init'].volumes).toContain('models:/models');
});

test("Prometheus scrapes every service's METRICS_PORT and loads the chart's alerts; Grafana provisions the chart's dashboard", () => {
  // Prometheus: its configuration file is deploy/compose/prometheus.yml, mounted where --config.file says.
  const prom = compose.services.prometheus;
  const configArg = String(JSON.stringify(prom.command)).match(/--config\.file=([^"\s]+)/)?.[1];
  const mounts = Object.fromEntries(
    (prom.volumes ?? []).map((v) => String(v).split(':')).map(([from, to]) => [to, path.normalize(from)]),
  );
  expect(mounts[configArg ?? '']).toBe(path.normalize('./deploy/compose/prometheus.yml'));
  const config = parse(readFileSync(path.join(repoRoot, 'deploy/compose/prometheus.yml'), 'utf8')) as {
    rule_files: string[];
    scrape_configs: { static_configs: { targets: string[]; labels: { service: string } }[] }[];
  };
  // ... every service's metrics listener (METRICS_PORT of its own environment), labelled with its name ...
  const targets = config.scrape_configs.flatMap((c) =>
    c.static_configs.flatMap((s) => s.targets.map((t) => [t, s.labels.service])),
  );
  expect(targets.sort()).toEqual(SERVICES.map((n) => [`${n}:${envOf(n).METRICS_PORT}`, n]).sort());
  // ... and the alert rules the chart ships, from the file that promtool checks in CI.
  expect(config.rule_files.map((f) => mounts[f])).toEqual([
    path.normalize('./charts/vision/files/prometheus-rules.yaml'),
  ]);

  // Grafana: the provisioning folder, a data source on that Prometheus, the chart's dashboard JSON mounted
  // in the folder its dashboard provider reads.
  const grafana = compose.services.grafana;
  const gMounts = Object.fromEntries(
    (grafana.volumes ?? []).map((v) => String(v).split(':')).map(([from, to]) => [to, path.normalize(from)]),
  );
  const provisioning = gMounts['/etc/grafana/provisioning'];
  expect(provisioning).toBe(path.normalize('./deploy/compose/grafana/provisioning'));
  const datasources = parse(
    readFileSync(path.join(repoRoot, provisioning, 'datasources/prometheus.yaml'), 'utf8'),
  ) as { datasources: { type: string; url: string; isDefault: boolean }[] };
  const promPort = (prom.ports ?? [])[0]?.split(':').pop();
  expect(datasources.datasources).toEqual([
    expect.objectContaining({ type: 'prometheus', url: `http://prometheus:${promPort}`, isDefault: true }),
  ]);
  const providers = parse(
    readFileSync(path.join(repoRoot, provisioning, 'dashboards/vision.yaml'), 'utf8'),
  ) as {
    providers: { type: string; options: { path: string } }[];
  };
  const dashboardDir = providers.providers[0].options.path;
  const dashboard = Object.entries(gMounts).find(([to]) => path.posix.dirname(to) === dashboardDir);
  expect(dashboard?.[1]).toBe(path.normalize('./charts/vision/files/grafana-dashboard.json'));
  expect(grafana.depends_on?.prometheus).toBeDefined();
});
