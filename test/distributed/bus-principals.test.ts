/**
 * Each service's own Kafka principal on the stack's real broker (SASL/SCRAM-SHA-512, StandardAuthorizer with no
 * ACL meaning no access; scripts/distributed/bus-logins.js, BUS_GRANTS): a wrong password is refused, and a valid
 * principal of one service can neither produce to another's topics nor consume in another's groups; and what
 * inference publishes for a task without tasks' grant for it is not stored. Runs in process and container mode, on
 * Kafka 3.9 and 4.1 (scripts/test-kafka-current.sh).
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import knexFactory from 'knex';
import {
  BUS_GRANTS,
  BUS_SERVICES,
  GROUPS,
  TOPICS,
  loadCallingIdentity,
  signJobGrant,
  type BusService,
} from '@vision/shared';
import type { DistributedStack } from '../helpers/distributed';
import { clip, client, describeDistributed, startFaultStack, waitFor } from './support';
import { joinOutcome, kafkaAs as kafkaAsUser, produceOutcome } from '../helpers/kafka-outcome';

const ALL_TOPICS = Object.values(TOPICS);
const ALL_GROUPS = Object.values(GROUPS);

/** The environment a running replica's process was started with, read from /proc (host pid in container mode). */
function processEnv(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const i = kv.indexOf('=');
    if (i > 0) out.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return out;
}

describeDistributed('each service has its own Kafka principal', () => {
  let stack: DistributedStack;
  /** A file task processed end to end by the first test. */
  let doneTask = '';
  const brokers = () => [stack.deployment.stack.kafkaBrokers];
  const login = (service: BusService) => stack.deployment.busLogins![service];

  /** A kafkajs client signed in as `username`. */
  const kafkaAs = (username: string, password: string, logs: string[] = []) =>
    kafkaAsUser(brokers(), username, password, logs, 'bus-principals-test');

  /** Publishes one message as `service` to `topic`: 'ok' or why the broker refused. */
  const produceAs = (service: BusService, topic: string, password = login(service).password) =>
    produceOutcome(kafkaAs(login(service).user, password), topic);

  /** Joins `group` reading `topic` as `service`: 'joined', or the broker's refusal. */
  function consumeAs(service: BusService, group: string, topic: string): Promise<string> {
    const logs: string[] = [];
    return joinOutcome(kafkaAs(login(service).user, login(service).password, logs), logs, group, topic);
  }

  beforeAll(async () => {
    stack = await startFaultStack();
  }, 300_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('every service process runs as its own principal; the gateway holds none, and none the admin', async () => {
    const d = stack.deployment;
    const admin = d.stack.kafkaSasl!;
    for (const p of Object.values(d.procs).flat()) {
      const env = processEnv(p.child!.pid!);
      if (p.name === 'gateway') expect(env.get('KAFKA_SASL_USERNAME')).toBeUndefined();
      else expect(env.get('KAFKA_SASL_USERNAME')).toBe(`${d.database}-${p.name}`);
      // Compared here, never printed: whether any value holds the broker admin's password.
      expect([...env.values()].some((v) => v.includes(admin.password))).toBe(false);
    }
    // The services work through their principals: a file task is processed end to end.
    const c = client(stack);
    const created = await c.upload(clip('pedestrians_vtest_opencv_10s.mov'));
    expect(created.status).toBe(201);
    doneTask = created.body.task_id as string;
    expect((await c.waitForStatus(doneTask, ['succeeded', 'failed'])).status).toBe('succeeded');
  }, 300_000);

  it("results stores no frame inference publishes for a task without tasks' grant for that task", async () => {
    const d = stack.deployment;
    const id = doneTask;
    expect(id).not.toBe('');
    const job = (taskId: string) => ({
      task_id: taskId,
      job_id: taskId,
      subject: 'acme',
      scene_code: 'person_vehicle',
    });
    const tasksKey = loadCallingIdentity(d.identityDirs.tasks, 'tasks').signer;
    const grants: Array<[number, string | undefined]> = [
      [900_001, undefined],
      [900_002, signJobGrant({ issuer: 'tasks', key: generateKeyPairSync('ed25519').privateKey }, job(id))],
      [900_003, signJobGrant(tasksKey, job('another-task'))],
      [900_004, signJobGrant(tasksKey, job(id))],
    ];
    const db = knexFactory({ client: 'pg', connection: d.databaseUrl('results'), pool: { min: 0, max: 1 } });
    try {
      // The probes come at the epoch the task's owner ran it at: results drops a frame of an owner below its fence,
      // whatever its grant, and this case is about the grant.
      const fence = await db.withSchema('results').table('job_fences').where('task_id', id).first('epoch');
      const epoch = Number(fence?.epoch ?? 0);
      // As inference itself: its principal may write vision.frames, whatever task a message names.
      const producer = kafkaAs(login('inference').user, login('inference').password).producer();
      await producer.connect();
      await producer.send({
        topic: TOPICS.frames,
        messages: grants.map(([seq, grant]) => ({
          key: id,
          value: JSON.stringify({
            schema: 1,
            type: 'frame',
            event_id: `${id}:${seq}`,
            task_id: id,
            seq,
            frame_id: `${id}-probe-${seq}`,
            frame_time_ms: seq,
            image: { width: 640, height: 360 },
            objects: [],
            lower_bound: 0.3,
            epoch,
            ...(grant ? { grant } : {}),
          }),
        })),
      });
      await producer.disconnect();
      const probes = async () =>
        (
          await db
            .withSchema('results')
            .table('result_frames')
            .where('task_id', id)
            .where('seq', '>', 900_000)
        ).map((r: { seq: number }) => Number(r.seq));
      await waitFor(
        'the granted probe frame',
        async () => ((await probes()).includes(900_004) ? true : undefined),
        60_000,
      );
      expect(await probes()).toEqual([900_004]);
    } finally {
      await db.destroy();
    }
  }, 120_000);

  it('a wrong password is refused, for a principal that exists', async () => {
    expect(await produceAs('inference', TOPICS.frames, `${login('inference').password}x`)).toBe(
      'KafkaJSSASLAuthenticationError',
    );
    expect(await produceAs('inference', TOPICS.frames)).toBe('ok');
  }, 60_000);

  it('a service produces to its own topics only', async () => {
    const seen: string[] = [];
    for (const service of BUS_SERVICES)
      for (const topic of ALL_TOPICS) seen.push(`${service}->${topic}: ${await produceAs(service, topic)}`);
    expect(seen).toEqual(
      BUS_SERVICES.flatMap((service) =>
        ALL_TOPICS.map(
          (topic) =>
            `${service}->${topic}: ${
              (BUS_GRANTS[service].produce as readonly string[]).includes(topic)
                ? 'ok'
                : 'TOPIC_AUTHORIZATION_FAILED'
            }`,
        ),
      ),
    );
  }, 120_000);

  it("a service consumes in its own groups only: another service's group is refused", async () => {
    const seen: string[] = [];
    const expected: string[] = [];
    for (const service of BUS_SERVICES) {
      const own = new Map(
        BUS_GRANTS[service].consume.map((c) => [c.group as string, c.topics as readonly string[]]),
      );
      for (const group of ALL_GROUPS) {
        if (own.has(group)) continue;
        // A topic it may describe (one it reads, else one it writes): only the group is refused.
        const topic = [...own.values()][0]?.[0] ?? BUS_GRANTS[service].produce[0];
        seen.push(`${service} in ${group}: ${await consumeAs(service, group, topic)}`);
        expected.push(`${service} in ${group}: GROUP_AUTHORIZATION_FAILED`);
      }
    }
    expect(seen).toEqual(expected);
    // The same probe joins where the grant allows it (the group's members rebalance around it, and back).
    expect(await consumeAs('tasks', GROUPS.tasksImageCalls, TOPICS.imageCalls)).toBe('joined');
  }, 300_000);

  it('a principal reads no topic it was not granted, in a group of its own', async () => {
    expect(await consumeAs('tasks', GROUPS.tasksImageCalls, TOPICS.frames)).toBe(
      'TOPIC_AUTHORIZATION_FAILED',
    );
  }, 60_000);
});
