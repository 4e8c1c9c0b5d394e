/**
 * kafkajs's request queue (one per broker connection) wakes its process every millisecond once it has answered
 * anything (tulios/kafkajs#1751). Once a client is made with newKafka an idle queue schedules nothing, so it prints
 * no TimeoutNegativeWarning and keeps no process alive, while a request that has to wait (behind the in-flight limit
 * or a broker's throttle) is still sent when it may be. Each case runs in a Node process of its own.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const REPO = path.join(__dirname, '../../..');
const KAFKA_BUS = path.join(REPO, 'packages/shared/dist/bus/kafka-bus.js');

/** The output of a Node process that runs `steps` (JavaScript) after the set-up below, and its exit status. */
function run(steps: string, patched: boolean): { status: number | null; stdout: string; stderr: string } {
  const setUp = `
    const RequestQueue = require(require.resolve('kafkajs/src/network/requestQueue', { paths: [${JSON.stringify(REPO)}] }));
    ${patched ? `require(${JSON.stringify(KAFKA_BUS)}).newKafka({ brokers: ['127.0.0.1:9'] }, 'queue-test');` : ''}
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const queue = (max = 1) =>
      new RequestQueue({ maxInFlightRequests: max, requestTimeout: 1000, clientId: 'c', broker: 'b', logger: quiet });
    const sent = [];
    const request = (id) => ({
      entry: { correlationId: id, apiName: 'Fetch', apiKey: 1, apiVersion: 11, resolve() {}, reject() {} },
      expectResponse: true,
      sendRequest: () => sent.push(id),
    });
    /** Counts the queue's checks of its pending requests from now on. */
    const counted = (q) => {
      const check = q.checkPendingRequests.bind(q);
      const c = { n: 0 };
      q.checkPendingRequests = () => { c.n++; check(); };
      return c;
    };
  `;
  const r = spawnSync(process.execPath, ['-e', `${setUp}\n${steps}`], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("kafkajs's request queues", () => {
  // What a connection's queue does after it has answered a request: it checks its pending requests again.
  const answered = `
    const q = queue();
    const checks = counted(q);
    q.push(request(1));
    q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    setTimeout(() => { console.log(JSON.stringify({ checks: checks.n, sent })); process.exit(0); }, 200);
  `;

  it('left as kafkajs ships them, check themselves every millisecond once idle and warn of a negative timeout', () => {
    const r = run(answered, false);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).checks).toBeGreaterThan(50);
    expect(r.stderr).toContain('TimeoutNegativeWarning');
  });

  it('once a client is made with newKafka, check once for the answer and then schedule nothing: no warning', () => {
    const r = run(answered.replace('process.exit(0)', 'q.destroy()'), true);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ checks: 1, sent: [1] });
    expect(r.stderr).not.toContain('TimeoutNegativeWarning');
  });

  it('still send a request queued behind the in-flight limit once the one in flight is answered', () => {
    const r = run(
      `
      const q = queue(1);
      q.push(request(1));
      q.push(request(2));
      const before = [...sent];
      q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
      console.log(JSON.stringify({ before, after: sent, pending: q.pending.length }));
      q.destroy();
    `,
      true,
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ before: [1], after: [1, 2], pending: 0 });
  });

  it("still send a request queued behind a broker's throttle when the throttle ends", () => {
    const r = run(
      `
      const q = queue(10);
      q.maybeThrottle(150);
      const t0 = Date.now();
      q.push(request(1));
      const before = [...sent];
      const wait = setInterval(() => {
        if (sent.length === 0) return;
        clearInterval(wait);
        console.log(JSON.stringify({ before, after: sent, waitedMs: Date.now() - t0 }));
        q.destroy();
      }, 5);
      setTimeout(() => process.exit(3), 5000).unref();
    `,
      true,
    );
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.before).toEqual([]);
    expect(out.after).toEqual([1]);
    expect(out.waitedMs).toBeGreaterThanOrEqual(140);
  });
});
