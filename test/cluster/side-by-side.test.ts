/**
 * Two releases of the chart side by side on the real node (scripts/test-cluster.sh), on the stack's one Kafka and one
 * Postgres: each with its prefix (its namespace, its name and a dot each) on topics, groups and principals, and a database with
 * logins of its own. Neither release knows the other's keys or tasks, neither's principals reach the other's topics,
 * and a topic reset of one (its topics deleted, then `helm upgrade`) leaves the other's topics, offsets and service
 * as they were. Both are called from inside their gateway pods (the right one has no route).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { busTopics, type BusService } from '@vision/shared';
import { readStackEnv } from '../../scripts/distributed/stack-servers';
import { kafkaAs, produceOutcome } from '../helpers/kafka-outcome';
import { eventually, get, installRelease, MEDIA, readyPod, run, type Release } from './node-cluster';

jest.setTimeout(1_800_000);

const stack = readStackEnv();
let left: Release;
let right: Release;
const keys: Record<string, string> = {};
let admin: Admin;
/** A release's prefix on the brokers, the chart's default: its namespace, its name and a dot each. */
const prefixOf = (r: Release) => `${r.namespace}.${r.name}.`;

/**
 * An image detection answered by `release`'s gateway pod on its own port (the image given on stdin, base64), with
 * `key`: the status and the body's error code, if any.
 */
function detectInPod(release: Release, key: string): string {
  const script = `let b='';process.stdin.on('data',(d)=>b+=d).on('end',async()=>{
const form=new FormData();form.append('scene_code','person_vehicle');
form.append('files',new Blob([Buffer.from(b,'base64')]),'street.jpg');
const r=await fetch('http://127.0.0.1:8080/v1/vision/image-detections',{method:'POST',body:form,
headers:{authorization:'Bearer ${key}','idempotency-key':'${randomUUID()}'}});
const j=await r.json().catch(()=>({}));console.log(r.status+' '+(j.error?.code??j.code??''))})`;
  const image = readFileSync(path.join(MEDIA, 'images/street_people_car_coco9891.jpg')).toString('base64');
  return run(
    'kubectl',
    [
      'exec',
      '-i',
      '-n',
      release.namespace,
      readyPod(release.namespace, 'gateway'),
      '--',
      'node',
      '-e',
      script,
    ],
    image,
  ).trim();
}

/** The Kafka password the chart generated for `service` of `release` (its Secret). */
function busPassword(release: Release, service: BusService): string {
  const secrets = get(['secrets', '-n', release.namespace]);
  const k = `KAFKA_${service.toUpperCase()}_PASSWORD`;
  const s = secrets.find((x) => (x as unknown as { data?: Record<string, string> }).data?.[k]);
  return Buffer.from((s as unknown as { data: Record<string, string> }).data[k], 'base64').toString();
}

async function offsets(prefix: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of busTopics(prefix)) out[t] = (await admin.fetchTopicOffsets(t)).map((p) => p.high);
  return out;
}

/**
 * The offsets of a release at rest: the same on two reads 2 s apart. What a call sets going after its answer (its
 * spends reported to quota on images' report loop, quota's events) is then published.
 */
function quietOffsets(prefix: string): Promise<Record<string, string[]>> {
  return eventually(async () => {
    const first = await offsets(prefix);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await offsets(prefix)).toEqual(first);
    return first;
  }, 60_000);
}

beforeAll(async () => {
  left = await installRelease('left', 'left');
  right = await installRelease('right', 'right', '--set', 'route.enabled=false');
  keys.left = left.createKey('side-left');
  keys.right = right.createKey('side-right');
  admin = new Kafka({
    clientId: 'side-by-side-test',
    brokers: [stack.kafkaBrokers],
    sasl: stack.kafkaSasl,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
});
afterAll(async () => {
  await admin?.disconnect();
  for (const r of [left, right]) if (r) await r.uninstall();
});

test("each release has its own prefixed topics and runs on them; neither's key is known to the other", async () => {
  const topics = await admin.listTopics();
  for (const prefix of [prefixOf(left), prefixOf(right)])
    expect(busTopics(prefix).filter((t) => !topics.includes(t))).toEqual([]);
  const calls = (prefix: string) =>
    admin
      .fetchTopicOffsets(`${prefix}vision.image-calls`)
      .then((ps) => ps.reduce((n, p) => n + Number(p.high), 0));
  const before = { left: await calls(prefixOf(left)), right: await calls(prefixOf(right)) };
  expect({
    leftOwn: detectInPod(left, keys.left),
    rightOwn: detectInPod(right, keys.right),
    leftKeyAtRight: detectInPod(right, keys.left).split(' ')[0],
    rightKeyAtLeft: detectInPod(left, keys.right).split(' ')[0],
  }).toEqual({ leftOwn: '201', rightOwn: '201', leftKeyAtRight: '401', rightKeyAtLeft: '401' });
  // Each release's detection was published on its own topic of image calls (one more message on each).
  await eventually(async () => {
    const after = { left: await calls(prefixOf(left)), right: await calls(prefixOf(right)) };
    expect(after).toEqual({ left: before.left + 1, right: before.right + 1 });
  }, 60_000);
});

test("neither release's principals reach the other's topics; each reaches its own", async () => {
  const outcome = async (mine: Release, theirs: string) =>
    produceOutcome(
      kafkaAs([stack.kafkaBrokers], `${prefixOf(mine)}vision-images`, busPassword(mine, 'images')),
      `${theirs}vision.image-calls`,
    );
  expect({
    leftToRight: await outcome(left, prefixOf(right)),
    rightToLeft: await outcome(right, prefixOf(left)),
    leftToLeft: await outcome(left, prefixOf(left)),
  }).toEqual({
    leftToRight: 'TOPIC_AUTHORIZATION_FAILED',
    rightToLeft: 'TOPIC_AUTHORIZATION_FAILED',
    leftToLeft: 'ok',
  });
});

test("a topic reset of one release leaves the other's topics, offsets and service as they were", async () => {
  const before = await quietOffsets(prefixOf(right));
  await admin.deleteTopics({ topics: busTopics(prefixOf(left)) });
  await eventually(async () => {
    const present = (await admin.listTopics()).filter((t) => t.startsWith(prefixOf(left)));
    if (present.length) throw new Error(`still there: ${present.join(', ')}`);
  });
  // The migration Job of `helm upgrade` creates the release's topics again.
  await left.upgrade();
  expect(await offsets(prefixOf(right))).toEqual(before);
  expect(detectInPod(right, keys.right)).toBe('201');
  // The reset release serves again on its new topics.
  const again = await eventually(() => {
    const out = detectInPod(left, keys.left);
    if (out !== '201') throw new Error(out);
    return out;
  });
  expect(again).toBe('201');
});
