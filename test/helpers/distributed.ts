import {
  Deployment,
  stackScript,
  type DeploymentOptions,
  type Link,
  type ServiceName,
  type StackServer,
  type Toxic,
} from '../../scripts/distributed/launcher';
import { callApi, type ApiInit } from './api-call';
import type { ApiResponse, StackOptions, TestStack } from './stack';

/**
 * The deployment behind a distributed TestStack: six service processes on the real servers of
 * scripts/stack, with fresh state (own database, bucket, emptied topics, flushed Redis).
 */
export interface DistributedStack extends TestStack {
  kind: 'distributed';
  deployment: Deployment;
  /** Calls the gateway at `base` (another gateway replica, for example) with the same validation as api(). */
  apiAt(base: string, method: string, urlPath: string, init?: ApiInit): Promise<ApiResponse>;
  /** Sends a signal (default SIGKILL) to a service process and waits for it to exit. */
  kill(name: ServiceName, opts?: { signal?: NodeJS.Signals; index?: number }): Promise<void>;
  /** Starts a killed or stopped service again on its port; waits for /readyz unless told not to. */
  restart(name: ServiceName, opts?: { index?: number; waitReady?: boolean }): Promise<void>;
  /** Adds a toxic on a link (needs `toxiproxy: true`). */
  addToxic(link: Link, toxic: Toxic & { name: string }): Promise<void>;
  removeToxic(link: Link, name: string): Promise<void>;
  /** Cuts (false) or restores (true) a link: a disabled proxy refuses and drops its connections. */
  setLink(link: Link, enabled: boolean): Promise<void>;
  /** Stops / starts one of the shared servers (scripts/stack/stop.sh, start.sh). Restart them before close. */
  stopServer(server: StackServer): Promise<void>;
  startServer(server: StackServer): Promise<void>;
}

export interface DistributedStackOptions extends StackOptions {
  /** Route Postgres, Redis, Kafka, S3 and inference links through toxiproxy. */
  toxiproxy?: boolean;
  replicas?: DeploymentOptions['replicas'];
  serviceEnv?: DeploymentOptions['serviceEnv'];
}

/**
 * Each call on a connection of its own: a pooled connection idle near the gateway's keep-alive timeout (5 s) can be
 * closed by the gateway as the client reuses it ("other side closed"), a race of the test's client, not of the
 * service (fetch's keep-alive timer may run a second late).
 */
const callOnItsOwnConnection = (base: string, method: string, urlPath: string, init?: ApiInit) =>
  callApi(base, method, urlPath, init, { connection: 'close' });

/**
 * Starts a distributed deployment (needs `npm run build` and the servers from scripts/stack/start.sh).
 * Mirrors startStandaloneStack: the gateway URL, api() validated against docs/openapi.yaml, close().
 */
export async function startDistributedStack(opts: DistributedStackOptions = {}): Promise<DistributedStack> {
  const deployment = new Deployment({
    keys: opts.keys,
    env: opts.env,
    toxiproxy: opts.toxiproxy,
    replicas: opts.replicas,
    serviceEnv: opts.serviceEnv,
    logDir: opts.dataDir,
  });
  await deployment.start();
  const proxyOf = (link: Link): string => {
    const name = deployment.proxies[link];
    if (!name) throw new Error(`link ${link} is not behind toxiproxy (start the stack with toxiproxy: true)`);
    return name;
  };
  return {
    kind: 'distributed',
    url: deployment.url,
    dataDir: deployment.logDir,
    deployment,
    api: (method, urlPath, init) => callOnItsOwnConnection(deployment.url, method, urlPath, init),
    apiAt: callOnItsOwnConnection,
    kill: (name, o) => deployment.kill(name, o),
    restart: (name, o) => deployment.restart(name, o),
    async addToxic(link, toxic) {
      await deployment.toxiproxy.addToxic(proxyOf(link), toxic);
    },
    async removeToxic(link, name) {
      await deployment.toxiproxy.removeToxic(proxyOf(link), name);
    },
    async setLink(link, enabled) {
      await deployment.toxiproxy.setEnabled(proxyOf(link), enabled);
    },
    async stopServer(server) {
      await stackScript('stop.sh', [server]);
    },
    async startServer(server) {
      await stackScript('start.sh', [server]);
    },
    close: (o) => deployment.close(o),
  };
}
