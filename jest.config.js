/** Jest runs the TypeScript sources directly (ts-jest transpiles each file alone; `npm run build` type-checks). */
// --- live stream tests (issue 14): the https test server's certificate is signed by a test CA
// (scripts/stack/live/tls.sh); jest workers trust it (Node reads NODE_EXTRA_CA_CERTS when a process starts).
const liveTestCa = require('node:path').join(
  process.env.VISION_STACK_DIR ??
    require('node:path').join(require('node:os').homedir(), '.cache/vision-stack'),
  'live-tls/ca.pem',
);
if (!process.env.NODE_EXTRA_CA_CERTS && require('node:fs').existsSync(liveTestCa))
  process.env.NODE_EXTRA_CA_CERTS = liveTestCa;
// --- end live stream tests

const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }];
module.exports = {
  // Shares typed-array constructors with the test realm so onnxruntime-node works under jest.
  testEnvironment: '<rootDir>/services/inference/test/support/onnx-environment.js',
  transform: { '^.+\\.ts$': tsJest },
  moduleNameMapper: {
    '^@vision/shared$': '<rootDir>/packages/shared/src/index.ts',
    '^@vision/shared/(.*)$': '<rootDir>/packages/shared/src/$1',
    '^@vision/(gateway|tasks|quota|results|images|inference)$': '<rootDir>/services/$1/src/index.ts',
  },
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  // The fault tests need the distributed deployment (scripts/test-distributed.sh sets E2E_STACK).
  testPathIgnorePatterns: [
    '/node_modules/',
    '/dist/',
    ...(process.env.E2E_STACK === 'distributed' ? [] : ['<rootDir>/test/distributed/']),
  ],
  testTimeout: 30000,
  setupFilesAfterEnv: ['<rootDir>/test/helpers/distributed-retry.ts'],
  maxWorkers: 2,
};
