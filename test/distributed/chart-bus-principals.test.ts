/**
 * The Helm chart's bus principals on the stack's real Kafka (SASL/SCRAM-SHA-512, StandardAuthorizer with no ACL
 * meaning no access): the migration Job's bus container, as the chart renders it (its command, its environment, its
 * Secret files), provisions the principals signed in as the broker's super user; then each Deployment's own
 * environment (its ConfigMap and its own variables), read by its service's configuration loader, signs in as its
 * principal, which writes its own topic of the release's KAFKA_PREFIX and is refused on another service's. No cluster: the Job's command runs here, as the image runs it (/app is the
 * repository root).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import {
  BUS_GRANTS,
  BUS_SERVICES,
  TOPICS,
  busName,
  busTopics,
  loadConfig,
  removeBusPrincipals,
  type BusService,
} from '@vision/shared';
import { readStackEnv } from '../../scripts/distributed/launcher';
import {
  componentOf,
  ensureHelm,
  KAFKA_ADMIN_SECRET,
  type Container,
  type Manifest,
  ofKind,
  podOf,
  type PodSpec,
  render,
  secretFilesOf,
} from '../deploy/chart-render';
import { repoRoot, SHAPES, type ServiceName } from '../deploy/deploy-support';
import { describeDistributed } from './support';
import { kafkaOutcome } from '../helpers/kafka-outcome';

/**
 * A container's environment as the kubelet gives it: the data of the ConfigMaps it takes whole (envFrom), its plain
 * values, and each `<KEY>_FILE` pointing at a file under
 * `dir` that holds the Secret key it names (`existing` gives the keys of Secrets the chart does not render).
 */
function containerEnv(
  ms: Manifest[],
  pod: PodSpec,
  c: Container,
  dir: string,
  existing: Record<string, Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? [])
    Object.assign(
      env,
      ofKind(ms, 'ConfigMap').find((m) => m.metadata.name === from.configMapRef?.name)?.data,
    );
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  for (const f of secretFilesOf(ms, pod, c)) {
    const value = f.value ?? existing[f.secretName]?.[f.key];
    if (value === undefined) throw new Error(`${c.name}: no value for ${f.secretName}/${f.key}`);
    const file = path.join(dir, `${c.name}-${f.setting}`);
    writeFileSync(file, `${value}\n`, { mode: 0o600 });
    env[f.variable] = file;
  }
  return env;
}

jest.setTimeout(300_000);

describeDistributed("the chart's bus principals on real Kafka", () => {
  const stack = readStackEnv();
  // A release prefix of its own on the shared broker: its topics and users are removed at the end.
  const prefix = `chart${Date.now().toString(36)}.`;
  let dir = '';
  let ms: Manifest[] = [];

  /** Publishes one message to `topic` signed in as `username`: 'ok' or why the broker refused. */
  async function produceAs(username: string, password: string, topic: string): Promise<string> {
    const producer = new Kafka({
      clientId: 'chart-bus-principals-test',
      brokers: [stack.kafkaBrokers],
      sasl: { mechanism: 'scram-sha-512', username, password },
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    }).producer({ allowAutoTopicCreation: false });
    try {
      return await kafkaOutcome(
        producer
          .connect()
          .then(() => producer.send({ topic, messages: [{ key: 'probe', value: '{"probe":true}' }] })),
      );
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vision-chart-bus-'));
    ensureHelm();
    ms = render(
      '--set',
      `external.kafka.brokers={${stack.kafkaBrokers}}`,
      '--set',
      `external.kafka.prefix=${prefix}`,
    );
  });
  const user = (s: BusService) => `${prefix}vision-${s}`;
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (!stack.kafkaSasl) return;
    const admin = { brokers: [stack.kafkaBrokers], sasl: stack.kafkaSasl };
    await removeBusPrincipals(admin, BUS_SERVICES.map(user));
    const kafka = new Kafka({
      clientId: 'chart-bus-principals-test',
      ...admin,
      logLevel: logLevel.NOTHING,
    }).admin();
    await kafka.connect();
    try {
      const mine = (await kafka.listTopics()).filter((t) => busTopics(prefix).includes(t));
      if (mine.length) await kafka.deleteTopics({ topics: mine });
    } finally {
      await kafka.disconnect();
    }
  });

  it("the Job's bus container provisions every principal as the broker's super user", () => {
    expect(stack.kafkaSasl).toBeDefined();
    const pod = (ofKind(ms, 'Job')[0].spec as { template: { spec: PodSpec } }).template.spec;
    const bus = (pod.initContainers ?? []).find((c) => c.name === 'bus')!;
    // The SRE's Secret of the broker's super user holds the stack's admin.
    const env = containerEnv(ms, pod, bus, dir, {
      [KAFKA_ADMIN_SECRET]: { username: stack.kafkaSasl!.username, password: stack.kafkaSasl!.password },
    });
    const [cmd, ...args] = bus.command!;
    expect(cmd).toBe('node');
    const r = spawnSync(process.execPath, args, {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect({ status: r.status, out: `${r.stdout}${r.stderr}` }).toMatchObject({ status: 0 });
    expect(r.stdout).toContain('topics created');
    expect(r.stdout).toContain(`principals: ${BUS_SERVICES.map((s) => `${s}=${user(s)}`).join(', ')}`);
    // No password is printed: neither the super user's nor a service's.
    const secret = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-secrets')!;
    for (const password of [
      stack.kafkaSasl!.password,
      ...BUS_SERVICES.map((s) =>
        Buffer.from(secret.data![`KAFKA_${s.toUpperCase()}_PASSWORD`], 'base64').toString(),
      ),
    ])
      expect(`${r.stdout}${r.stderr}`.includes(password)).toBe(false);
  });

  it("each Deployment's principal writes its own topic and is refused on another service's; the gateway has none", async () => {
    const seen: string[] = [];
    for (const d of ofKind(ms, 'Deployment')) {
      const pod = podOf(d).spec;
      const [c] = pod.containers;
      const program = /^services\/([a-z]+)\//.exec(c.command?.[1] ?? '')![1] as ServiceName;
      // The service's own configuration loader reads the pod's environment and its password file.
      const cfg = loadConfig(SHAPES[program], containerEnv(ms, pod, c, dir, {})) as {
        KAFKA_SASL_USERNAME?: string;
        KAFKA_SASL_PASSWORD?: string;
        KAFKA_PREFIX: string;
      };
      expect(cfg.KAFKA_PREFIX).toBe(prefix);
      if (!(BUS_SERVICES as readonly string[]).includes(program)) {
        expect({ component: componentOf(d), user: cfg.KAFKA_SASL_USERNAME }).toEqual({
          component: 'gateway',
          user: undefined,
        });
        continue;
      }
      const service = program as BusService;
      const { KAFKA_SASL_USERNAME: user, KAFKA_SASL_PASSWORD: password } = cfg;
      expect(user).toBe(`${prefix}vision-${service}`);
      const own: readonly string[] = BUS_GRANTS[service].produce;
      const other = Object.values(TOPICS).find((t) => !own.includes(t))!;
      const got = {
        component: componentOf(d),
        own: own[0] && (await produceAs(user!, password!, busName(cfg.KAFKA_PREFIX, own[0]))),
        other: await produceAs(user!, password!, busName(cfg.KAFKA_PREFIX, other)),
      };
      expect(got).toEqual({
        component: componentOf(d),
        own: own[0] && 'ok',
        other: 'TOPIC_AUTHORIZATION_FAILED',
      });
      seen.push(service);
    }
    expect([...new Set(seen)].sort()).toEqual([...BUS_SERVICES].sort());
  });

  it("a principal with another service's password is refused", async () => {
    const secret = ofKind(ms, 'Secret').find((s) => s.metadata.name === 'vis-vision-secrets')!;
    const imagesPassword = Buffer.from(secret.data!.KAFKA_IMAGES_PASSWORD, 'base64').toString();
    expect(await produceAs(user('tasks'), imagesPassword, busName(prefix, TOPICS.taskEvents))).toBe(
      'KafkaJSSASLAuthenticationError',
    );
  });
});
