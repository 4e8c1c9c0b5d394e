/**
 * Jest environment for tests that run onnxruntime-node. The native binding creates output typed
 * arrays in Node's main realm, while onnxruntime-common (loaded inside Jest's vm context) checks them
 * with `instanceof` against the context's constructors and rejects them. Sharing the main realm's
 * typed-array constructors with the test context makes both sides agree. Use with the docblock
 * `@jest-environment ./services/inference/test/support/onnx-environment.js`.
 */
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

// Memory of this jest worker around each test file: one JSON line per phase appended to the file that
// VISION_MEM_LOG names (for finding which file grows a worker's RSS outside the JS heap), and a warning on
// stderr when a file leaves the worker above 3 GB resident whatever the setting.
const MEM_LOG = process.env.VISION_MEM_LOG;
const WARN_RSS = 3 * 2 ** 30;
function memLine(phase, testPath) {
  // Under `node --expose-gc`, after a full collection: what the file left reachable, not its garbage.
  if (MEM_LOG && phase === 'teardown' && typeof globalThis.gc === 'function') globalThis.gc();
  const m = process.memoryUsage();
  if (MEM_LOG) {
    const line = {
      t: Date.now(),
      pid: process.pid,
      phase,
      file: testPath,
      rss: m.rss,
      heap: m.heapUsed,
      ext: m.external,
      ab: m.arrayBuffers,
    };
    require('node:fs').appendFileSync(MEM_LOG, JSON.stringify(line) + '\n');
  }
  if (phase === 'teardown' && m.rss > WARN_RSS)
    process.stderr.write(
      `jest worker ${process.pid}: ${(m.rss / 2 ** 30).toFixed(1)} GB resident after ${testPath}\n`,
    );
}

class OnnxEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
  async setup() {
    memLine('setup', this.testPath);
    await super.setup();
  }
  async teardown() {
    await super.teardown();
    memLine('teardown', this.testPath);
  }
}

module.exports = OnnxEnvironment;
