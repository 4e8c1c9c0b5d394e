/**
 * Three jest projects (`npx jest --selectProjects unit|service|e2e`; plain `jest` runs all three):
 *  - unit:    `<package>/test/unit/**` — pure modules only (domain rules, parsers, formatters). No sockets, no child
 *             processes (test/helpers/unit-guard.ts fails a test that tries), no database. `npm run test:unit`.
 *  - service: every other `<package>/test/**` — one service or package at a time, with its real adapters
 *             (PGlite, the ONNX model, ffmpeg, loopback HTTP servers).
 *  - e2e:     `test/**` at the root — the whole standalone stack, the deployment files, and (with E2E_STACK=distributed,
 *             set by scripts/test-distributed.sh) the distributed deployment and its fault tests.
 * Jest runs the TypeScript sources directly (ts-jest transpiles each file alone; `npm run build` type-checks).
 */
// --- live stream tests: the https test server's certificate is signed by a test CA
// (scripts/stack/live/tls.sh); jest workers trust it. Node reads NODE_EXTRA_CA_CERTS once, when a process
// starts, and takes one file: tls.sh --trust makes the CA now (before any worker starts; on a fresh machine
// it did not exist yet) and names a file holding it plus whatever NODE_EXTRA_CA_CERTS named already (a
// machine that set it to its own bundle kept the test CA out, and the standalone https create answered
// stream_unreachable: the tasks service's redirect walk failed its TLS check).
try {
  process.env.NODE_EXTRA_CA_CERTS = require('node:child_process')
    .execFileSync('bash', [require('node:path').join(__dirname, 'scripts/stack/live/tls.sh'), '--trust'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    .trim();
} catch {
  // no openssl: the live test's https check says so loudly
}
// --- end live stream tests

const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }];
const shared = {
  rootDir: __dirname,
  // The transformed sources, kept where CI keeps its caches (a fresh machine's /tmp starts empty every run).
  cacheDirectory: require('node:path').join(require('node:os').homedir(), '.cache', 'vision-jest'),
  transform: {
    '^.+\\.ts$': tsJest,
    '/node_modules/@platformatic/.+\\.js$': '<rootDir>/test/helpers/esm-package-transform.js',
  },
  // ES-module-only packages are transpiled to CommonJS (test/helpers/esm-package-transform.js).
  transformIgnorePatterns: ['/node_modules/(?!@platformatic/)'],
  moduleNameMapper: {
    '^@vision/shared$': '<rootDir>/packages/shared/src/index.ts',
    '^@vision/shared/(.*)$': '<rootDir>/packages/shared/src/$1',
    '^@vision/(gateway|tasks|quota|results|images|inference)$': '<rootDir>/services/$1/src/index.ts',
    '^@vision/sdk$': '<rootDir>/packages/sdk/src/index.ts',
  },
};
const ignored = ['/node_modules/', '/dist/'];

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testEnvironment: 'node',
      roots: ['<rootDir>/packages', '<rootDir>/services'],
      testMatch: ['**/test/unit/**/*.test.ts'],
      testPathIgnorePatterns: ignored,
      setupFilesAfterEnv: ['<rootDir>/test/helpers/unit-guard.ts'],
    },
    {
      ...shared,
      displayName: 'service',
      // Shares typed-array constructors with the test realm so onnxruntime-node works under jest.
      testEnvironment: '<rootDir>/services/inference/test/support/onnx-environment.js',
      roots: ['<rootDir>/packages', '<rootDir>/services'],
      testMatch: ['**/test/**/*.test.ts'],
      testPathIgnorePatterns: [...ignored, '/test/unit/'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testEnvironment: '<rootDir>/services/inference/test/support/onnx-environment.js',
      roots: ['<rootDir>/test'],
      testMatch: ['**/test/**/*.test.ts'],
      // The fault tests need the distributed deployment (scripts/test-distributed.sh sets E2E_STACK).
      testPathIgnorePatterns: [
        ...ignored,
        // Elsewhere test/distributed-skipped.test.ts lists them as skipped, with the command that runs each.
        ...(process.env.E2E_STACK === 'distributed'
          ? ['<rootDir>/test/distributed-skipped.test.ts']
          : ['<rootDir>/test/distributed/']),
        // The chart on a real node: only under scripts/test-cluster.sh, which starts the node and sets E2E_STACK=cluster.
        ...(process.env.E2E_STACK === 'cluster' ? [] : ['<rootDir>/test/cluster/']),
        // npm test leaves these to a command by hand (scripts/test-all.sh says why).
        ...(process.env.VISION_BY_HAND_APART === '1'
          ? ['<rootDir>/test/distributed/inference-replicas.test.ts']
          : []),
        // npm test runs the chart's tests in a phase of their own, after the binaries they need (scripts/test-all.sh).
        ...(process.env.VISION_CHART_TESTS_APART === '1'
          ? ['<rootDir>/test/deploy/helm-chart.test.ts', '<rootDir>/test/deploy/kube-install.test.ts']
          : []),
      ],
    },
  ],
  // A safety net, not a speed check: tests that start an in-memory Postgres and services inside the test
  // took over 30 s on a 2-core machine at load ~20 (upload-and-lifecycle, gateway) and passed with more time.
  testTimeout: 90000,
  // Three workers on two cores: a file spends much of its time waiting (streams in real time, timers, child
  // processes), and with two workers the suite left about one core idle (a lowest-priority build beside it got
  // that much); with three the machine is busy and the suite takes less time. More would only queue for the cores.
  maxWorkers: 3,
  // One fresh PGlite data directory for every in-memory database of the run (VISION_PGLITE_TEMPLATE).
  globalSetup: '<rootDir>/test/helpers/pglite-template.ts',
  globalTeardown: '<rootDir>/test/helpers/pglite-template-teardown.ts',
  // Every test file gets a fresh worker process. Libraries register process-lifetime hooks with Node
  // (prom-client's GC observer and event-loop monitor, OpenTelemetry's module and diagnostics-channel
  // hooks, listeners on the real process object), and each keeps the jest context of the file that
  // registered it reachable, with that file's PGlite databases (WASM memory) and ONNX sessions: a worker
  // kept every file it ran and grew by 0.4-1 GB per file until the kernel killed it at 12 GB, outside
  // the JS heap. jest replaces a worker whose heapUsed exceeds this limit after a file; a file leaves far
  // more than 64 MB of heap, so in effect no worker runs two files that start services. (jest's limit
  // reads heapUsed, not RSS; the retained memory is native, so a limit in GB never triggers in time.)
  workerIdleMemoryLimit: '64MB',
  // CI's closing tally (scripts/ci/tally.js): a no-op unless VISION_TEST_TALLY names a file.
  reporters: ['default', '<rootDir>/scripts/ci/tally-reporter.js'],
  // jest's order, but the distributed suite runs last the files that read traces or series or render the chart
  // (their servers and helm may still be building).
  testSequencer: '<rootDir>/test/helpers/background-builds-last-sequencer.js',
};
