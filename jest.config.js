/** Jest runs the TypeScript sources directly (swc strips types; `npm run build` type-checks). */
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];
module.exports = {
  // Shares typed-array constructors with the test realm so onnxruntime-node works under jest.
  testEnvironment: '<rootDir>/services/inference/test/support/onnx-environment.js',
  transform: { '^.+\\.ts$': swc },
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
  maxWorkers: 2,
};
