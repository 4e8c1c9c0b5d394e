/**
 * The standalone gateway's own thread (a worker_thread started by gateway-host.ts): the gateway's HTTP
 * side (authentication with its key cache, per-subject limits, the door, the proxy) on an event loop of
 * its own, so that its answers never wait behind the other services' work on the main thread. Its keys
 * are looked up in the main thread's key store (thread-rpc.ts), where the one embedded database is.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createLogger, metricsRegistry, startTelemetry, type RunningService } from '@vision/shared';
import type * as GatewayModule from '@vision/gateway';
import { connectPeer, type EdgeCalls, type EdgeEvents, type MainCalls } from './thread-rpc';

/** What gateway-host.ts hands the thread at start. */
export interface GatewayThreadData {
  env: Record<string, string | undefined>;
  port: number;
  host: string;
  channel: MessagePort;
  /** The key store's revocation count when the thread starts. */
  revocations: number;
}

/** What the thread tells its host on the worker's own port: listening, or why not. */
export type GatewayThreadStatus =
  { kind: 'listening'; port: number } | { kind: 'failed'; message: string; code?: string; stack?: string };

const data = workerData as GatewayThreadData;
// Telemetry first, so that its instrumentation patches http and express before the gateway loads them;
// everything in this thread reports as the gateway.
const telemetry = startTelemetry('gateway', { ...data.env, VISION_MODE: 'standalone' });
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadGatewayConfig, startEdge } = require('@vision/gateway') as typeof GatewayModule;

const cfg = loadGatewayConfig(data.env);
const logger = createLogger('standalone', { level: cfg.LOG_LEVEL }).child({ service: 'gateway' });
let revocations = data.revocations;
let running: RunningService | undefined;

const main = connectPeer<EdgeCalls, MainCalls, EdgeEvents, never>(
  data.channel,
  {
    readiness: () => {
      if (!running?.readiness) throw new Error('the gateway is not listening');
      return running.readiness();
    },
    metrics: () => metricsRegistry.getMetricsAsJSON(),
    close: async () => {
      await running?.close();
      await telemetry.shutdown();
    },
  },
  (event) => {
    if (event.name === 'revocations') revocations = event.value;
  },
);

const report = (status: GatewayThreadStatus) => parentPort?.postMessage(status);

startEdge(cfg, {
  logger,
  keys: {
    authenticate: async (key) => (await main.call('authenticate', key)) ?? undefined,
    get revocations() {
      return revocations;
    },
  },
  database: () => main.call('database'),
  port: data.port,
  host: data.host,
}).then(
  (svc) => {
    running = svc;
    report({ kind: 'listening', port: svc.port });
  },
  (err: unknown) => {
    const e = err as NodeJS.ErrnoException;
    report({ kind: 'failed', message: e.message ?? String(err), code: e.code, stack: e.stack });
  },
);
