/**
 * The main thread's side of the standalone gateway thread (gateway-thread.ts): starts the worker,
 * answers its key lookups from the key store held here (the one embedded database is in this thread),
 * tells it each revocation, and reads its readiness and metrics. An error in the thread, or its exit
 * while nobody closed it, is handed to `onFatal`: the process ends as on any fatal error.
 */
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { GatewayKeys, RunningGateway } from '@vision/gateway';
import type { MetricsJson } from '@vision/shared';
import type { GatewayThreadData, GatewayThreadStatus } from './gateway-thread';
import { connectPeer, type EdgeCalls, type EdgeEvents, type MainCalls } from './thread-rpc';

/**
 * The thread runs the built JavaScript (`npm run build`): from dist/ this is the file beside this one; a
 * test that loads the TypeScript sources of src/ starts the same built file.
 */
const ENTRY = path.resolve(__dirname, '..', 'dist', 'gateway-thread.js');

export interface GatewayThread extends RunningGateway {
  /** The gateway thread's metrics, for the process's one /metrics. */
  metrics(): Promise<MetricsJson>;
}

export async function startGatewayThread(opts: {
  env: Record<string, string | undefined>;
  port: number;
  host: string;
  keys: GatewayKeys;
  onFatal: (err: Error) => void;
}): Promise<GatewayThread> {
  const { keys } = opts;
  const { port1, port2 } = new MessageChannel();
  const data: GatewayThreadData = {
    env: opts.env,
    port: opts.port,
    host: opts.host,
    channel: port2,
    revocations: keys.keys.revocations,
  };
  const worker = new Worker(ENTRY, {
    name: 'gateway',
    workerData: data,
    transferList: [port2],
    stdout: false,
    stderr: false,
  });
  const edge = connectPeer<MainCalls, EdgeCalls, never, EdgeEvents>(port1, {
    authenticate: async (key) => (await keys.keys.authenticate(key)) ?? null,
    database: () => keys.database(),
  });
  const unwatch = keys.keys.watchRevocations((count) => edge.tell('revocations', count));
  let closing = false;
  const stop = () => {
    unwatch();
    edge.close('the gateway thread has stopped');
    port1.close();
  };

  const port = await new Promise<number>((resolve, reject) => {
    const failed = (err: Error) => {
      stop();
      void worker.terminate();
      reject(err);
    };
    worker.once('message', (status: GatewayThreadStatus) => {
      if (status.kind === 'listening') return resolve(status.port);
      failed(Object.assign(new Error(status.message), { code: status.code, stack: status.stack }));
    });
    worker.once('error', failed);
    worker.once('exit', (code) =>
      failed(new Error(`the gateway thread exited (code ${code}) before it listened`)),
    );
  });
  worker.removeAllListeners();
  // From now on, an error in the thread or an exit nobody asked for ends the process.
  worker.on('error', (err: unknown) => {
    if (closing) return;
    closing = true;
    stop();
    opts.onFatal(err instanceof Error ? err : new Error(String(err)));
  });
  worker.on('exit', (code) => {
    if (closing) return;
    closing = true;
    stop();
    opts.onFatal(new Error(`the gateway thread exited (code ${code})`));
  });

  return {
    name: 'gateway',
    port,
    url: `http://127.0.0.1:${port}`,
    devKey: keys.devKey,
    keys: keys.keys,
    readiness: () => edge.call('readiness'),
    metrics: () => edge.call('metrics'),
    async close() {
      if (closing) return keys.close();
      closing = true;
      try {
        await edge.call('close');
      } finally {
        stop();
        await worker.terminate();
        await keys.close();
      }
    },
  };
}
