/**
 * Once a kafkajs client is made (newKafka), the TimeoutNegativeWarning of kafkajs's request queue
 * (tulios/kafkajs#1751) is not printed; every other warning still is, a negative timeout of other code
 * included. Each case runs in a Node process of its own: Node prints that warning once per process.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const REPO = path.join(__dirname, '../../..');
const KAFKA_BUS = path.join(REPO, 'packages/shared/dist/bus/kafka-bus.js');

/** The stderr of a Node process that runs `steps` (JavaScript) after the set-up below. */
function stderrOf(steps: string): string {
  const setUp = `
    const { newKafka } = require(${JSON.stringify(KAFKA_BUS)});
    const RequestQueue = require(require.resolve('kafkajs/src/network/requestQueue', { paths: [${JSON.stringify(REPO)}] }));
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    // What each connection of a kafkajs client does when it starts: a timer of a negative delay.
    const startQueue = () =>
      new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 1000, clientId: 'c', broker: 'b', logger: quiet })
        .scheduleCheckPendingRequests();
  `;
  // The queue's timer keeps coming back: the process ends once the warnings had their turn to print.
  const end = 'setTimeout(() => process.exit(0), 100);';
  const r = spawnSync(process.execPath, ['-e', `${setUp}\n${steps}\n${end}`], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.status).toBe(0);
  return r.stderr;
}

describe("kafkajs's TimeoutNegativeWarning", () => {
  it('is printed by a kafkajs request queue on its own', () => {
    expect(stderrOf('startQueue();')).toContain('TimeoutNegativeWarning');
  });

  it('is not printed once a client was made with newKafka; other warnings still are', () => {
    const stderr = stderrOf(`
      newKafka({ brokers: ['127.0.0.1:9'] }, 'warning-test');
      startQueue();
      process.emitWarning('still printed', 'OtherWarning');
    `);
    expect(stderr).not.toContain('TimeoutNegativeWarning');
    expect(stderr).toContain('OtherWarning: still printed');
  });

  it("is still printed for another code's negative timeout", () => {
    const stderr = stderrOf(`
      newKafka({ brokers: ['127.0.0.1:9'] }, 'warning-test');
      setTimeout(() => undefined, -1);
    `);
    expect(stderr).toContain('TimeoutNegativeWarning');
  });
});
