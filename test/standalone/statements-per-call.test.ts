/**
 * What one image call asks of the database and the bus (test/helpers/statements.js): the statements of every
 * service and the messages published, from the request to the call's settling (its spend recorded by quota, its
 * task record relayed to tasks and results), for a call of ten images and for a call of one, on a quota lease the
 * images service already holds. The idle loops' polls that found nothing are not the call's and are left out; the
 * standalone database's search_path switches are counted apart (one connection shared by five schemas; the
 * distributed services have none). docs/PERFORMANCE.md ("Statements and messages per call") records the figures;
 * a change that adds a statement or a message to a call fails here until that table says why.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { counts, install, record, recorded, type Statement } from '../helpers/statements';
import { MEDIA, startStandaloneStack, type TestStack } from '../helpers/stack';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

keepClearOfQuotaDayTurn();

const KEY = 'statements-key-0123456789';
const NAMES = [
  'street_bus_pedestrians_coco2006.jpg',
  'street_doubledecker_bus_coco1584.jpg',
  'street_people_car_coco9891.jpg',
  'vehicles_bicycle_pickup_dog_yolox.jpg',
  'boat_sailboat_kodim06.png',
  'fishing_standin_people_in_boat_kodim14.png',
  'sheep_coco5992.jpg',
  'cattle_cameratrap_crop.jpg',
  'none_bedroom_coco632.jpg',
  'none_brick_facade_kodim01.webp',
];
const IMAGES = NAMES.map((n) => readFileSync(path.join(MEDIA, 'images', n)));
const TEN = NAMES.map((_, i) => i);

/** The idle loops' polls (outbox relays, the webhook dispatcher, the frames announcer): not a call's when they find nothing. */
const POLLS = [
  /^with (done as .*, )?batch as \( select id from "outbox"/,
  /^WITH due AS/,
  /^SELECT t\.task_id, t\.subject, m\.last_seq/,
  /^select .* from "tasks" where "kind" = /,
];
/**
 * The job-running replica's own clock (docs/ARCHITECTURE.md, "Who runs a video job"): its lease's renewal, the
 * replicas' loads and its look for jobs to take, whatever the calls.
 */
const CLOCKED = [
  /^insert into replicas /,
  /^select r\.replica_id, /,
  /^with handed as \( select j\.job_id from jobs j /,
];
const SWITCH = /^set search_path/;

/** The figures of docs/PERFORMANCE.md's table: a call's statements (switches apart) and messages, at most. */
const MOST = { statements: 14, messages: 3 };

/** A call's figures: its statements (service and text), search_path switches, messages by service. */
interface CallCost {
  statements: string[];
  switches: number;
  messages: Record<string, number>;
}

let stack: TestStack;

beforeAll(async () => {
  stack = await startStandaloneStack({
    keys: `${KEY}:statements`,
    env: {
      // One lease for the whole file: each call reserves from it, as calls in a row do.
      IMAGES_QUOTA_LEASE_IDLE_MS: '600000',
      IMAGES_QUOTA_LEASE_WINDOW_MS: '600000',
      // The caches and the slow loops do not come round while a call is counted.
      GATEWAY_AUTH_CACHE_MS: '300000',
      IMAGES_SCENE_CACHE_MS: '300000',
      IMAGES_CALL_CLAIM_MS: '600000',
      IMAGES_JANITOR_INTERVAL_MS: '0',
      QUOTA_SWEEP_INTERVAL_MS: '600000',
      RESULTS_JANITOR_INTERVAL_MS: '0',
      TASKS_RECONCILE_INTERVAL_MS: '600000',
      TASKS_POLL_INTERVAL_MS: '600000',
    },
  });
  install();
}, 120_000);

afterAll(() => stack?.close());

async function call(indices: number[]): Promise<void> {
  const form = new FormData();
  form.append('scene_code', 'person_vehicle');
  for (const i of indices) form.append('files', new Blob([IMAGES[i]]), NAMES[i]);
  const r = await stack.api('POST', '/v1/vision/image-detections', {
    key: KEY,
    headers: { 'idempotency-key': randomUUID() },
    body: form,
  });
  expect(r.status).toBe(201);
}

/** Whether the call's last steps ran: its completion, its events relayed, its task stored by results. */
function settled(list: Statement[]): boolean {
  const seen = (service: string, re: RegExp, rows = 0) =>
    list.some((s) => s.service === service && re.test(s.sql) && s.rows >= rows);
  return (
    seen('images', /^update "image_calls" set "completed_at"/) &&
    seen('quota', POLLS[0], 1) &&
    seen('images', POLLS[0], 1) &&
    seen('results', /^select \* from "webhook_endpoints"/)
  );
}

/** The statements and messages of one call of `indices`, from its request to its settling. */
async function costOf(indices: number[]): Promise<CallCost> {
  const before = counts().messages;
  record();
  await call(indices);
  const list: Statement[] = [];
  for (const until = Date.now() + 30_000; !settled(list);) {
    if (Date.now() > until) throw new Error(`the call did not settle: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 50));
    list.push(...recorded());
  }
  // Whatever the settling still starts (none is expected) is counted too.
  await new Promise((r) => setTimeout(r, 500));
  list.push(...recorded());
  const after = counts().messages;
  const cost: CallCost = { statements: [], switches: 0, messages: {} };
  list.forEach((s, i) => {
    const idle = (x: Statement | undefined) =>
      x !== undefined &&
      ((x.rows === 0 && POLLS.some((re) => re.test(x.sql))) || CLOCKED.some((re) => re.test(x.sql)));
    if (idle(s)) return;
    if (SWITCH.test(s.sql)) {
      if (!idle(list[i + 1])) cost.switches++;
      return;
    }
    cost.statements.push(`${s.service}: ${s.sql.slice(0, 100)}`);
  });
  for (const [k, v] of Object.entries(after))
    if (v > (before[k] ?? 0)) cost.messages[k] = v - (before[k] ?? 0);
  return cost;
}

it(`a call of ten images and a call of one each run at most ${MOST.statements} statements and publish at most ${MOST.messages} messages`, async () => {
  // The lease, the key's lookup, the scene and every compiled path: taken by the calls before.
  await costOf([0]);
  await costOf(TEN);
  for (const indices of [TEN, [2]]) {
    const cost = await costOf(indices);
    const messages = Object.values(cost.messages).reduce((a, b) => a + b, 0);
    // The statements themselves when there are too many, so that a failure says which.
    expect(cost.statements.length > MOST.statements ? cost.statements : []).toEqual([]);
    expect(messages > MOST.messages ? cost.messages : {}).toEqual({});
  }
}, 120_000);
