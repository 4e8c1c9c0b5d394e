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

class OnnxEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = OnnxEnvironment;
