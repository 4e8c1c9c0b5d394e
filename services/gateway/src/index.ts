import type { Express } from 'express';
import {
  closeServer,
  createLimiter,
  createLogger,
  LOAD_HEADER,
  listen,
  metrics,
  openDb,
  runReadiness,
  type IdentitySigner,
  loadCallingIdentity,
  type Limiter,
  type Logger,
  type ReadinessReport,
  type RunningService,
  type StartOptions,
} from '@vision/shared';
import { createApp } from './http/app';
import type { Upstream } from './domain/routes';
import { gatewayKeyPrefix } from './domain/redis-keys';
import { createForwarder, type Forwarder } from './http/proxy';
import { loadGatewayConfig, type GatewayConfig } from './config';
import { resolveConsoleDir } from './http/console';
import { loadOpenApi, resolveOpenApiFile } from './http/openapi';
import { openKeysInbox, type KeysInbox } from './keys-inbox';
import { KeyStore, keyMigrations, type KeyLookup } from './store/key-store';
import { watchEventLoop } from './http/event-loop';
import { provisionKeys, type ProvisionedKey } from './use-cases/provision-keys';
import { Door } from './use-cases/door';

export { createApp } from './http/app';
export { KeyStore, keyMigrations, type KeyLookup } from './store/key-store';
export { matchRoute } from './domain/routes';
export { parseBearer, hashKey, generateKey } from './domain/key-format';
export { loadGatewayConfig, type GatewayConfig } from './config';

export interface RunningGateway extends RunningService {
  /** Set when this start created the first (development) key; it is shown once and only its hash is kept. */
  devKey?: ProvisionedKey;
  keys: KeyStore;
}

/** Opens the key database with the gateway's schema and migrations (used by the service and the CLI). */
export async function openKeyStore(
  cfg: GatewayConfig,
  logger = createLogger('gateway', { level: cfg.LOG_LEVEL }),
) {
  const db = await openDb(cfg, { schema: 'gateway', migrations: keyMigrations, logger });
  return { db, keys: new KeyStore(db.knex) };
}

export interface GatewayDeps {
  cfg: GatewayConfig;
  /** The gateway's key: it alone signs a caller's identity toward tasks, quota, results and images. */
  signer: IdentitySigner;
  logger: Logger;
  /** The key database's readiness check. */
  database: () => Promise<void>;
  keys: KeyLookup;
  limiter: Limiter;
  openapi: Record<string, unknown>;
}

export interface GatewayParts {
  app: Express;
  forward: Forwarder;
  /** The full readiness report (each dependency and its error), for the internal port only. */
  readiness: () => Promise<ReadinessReport>;
  /** Stops reading the connection-wait gauge. */
  unwatch: () => void;
}

/** The gateway's composition root: the upstream forwarder and the app (authentication, limits, routing). */
export function createGateway(deps: GatewayDeps): GatewayParts {
  const { cfg, logger, limiter } = deps;
  const checks = { database: deps.database, limiter: () => limiter.check() };
  const door = new Door(cfg.GATEWAY_ADMISSION);
  const forward = createForwarder(logger, {
    timeoutMs: cfg.GATEWAY_UPSTREAM_TIMEOUT_MS,
    pooledSockets: cfg.GATEWAY_UPSTREAM_SOCKETS,
    uploadIdleMs: cfg.GATEWAY_UPLOAD_IDLE_MS,
    streamStallMs: cfg.GATEWAY_STREAM_STALL_MS,
    onAnswer: (target, headers) => door.observe(target.name as Upstream, headers[LOAD_HEADER]),
  });
  const app = createApp({
    logger,
    keys: deps.keys,
    authCacheMs: cfg.GATEWAY_AUTH_CACHE_MS,
    limiter,
    signer: deps.signer,
    upstreams: {
      tasks: cfg.TASKS_URL,
      quota: cfg.QUOTA_URL,
      results: cfg.RESULTS_URL,
      images: cfg.IMAGES_URL,
    },
    limits: { qps: cfg.GATEWAY_QPS, burst: cfg.GATEWAY_BURST, concurrency: cfg.GATEWAY_CONCURRENCY },
    limitOverrides: cfg.GATEWAY_LIMIT_OVERRIDES,
    forward,
    door,
    openapi: deps.openapi,
    consoleDir: resolveConsoleDir(cfg.GATEWAY_CONSOLE_DIR),
    readiness: checks,
  });
  // An admitted call must never wait for a connection: this shows whether any request does.
  const upstreams = {
    tasks: cfg.TASKS_URL,
    quota: cfg.QUOTA_URL,
    results: cfg.RESULTS_URL,
    images: cfg.IMAGES_URL,
  };
  const unwatchQueued = metrics.upstreamQueued.addSource(() => {
    const queued = forward.queued();
    return Object.entries(upstreams).map(([upstream, url]) => [
      { upstream },
      queued.get(new URL(url).origin) ?? 0,
    ]);
  });
  const unwatchLoop = watchEventLoop();
  const unwatch = () => {
    unwatchQueued();
    unwatchLoop();
  };
  return { app, forward, readiness: () => runReadiness(checks), unwatch };
}

/**
 * The gateway's keys held where its database is: the key store (schema `gateway`), the keys configured
 * or made at start, and in standalone on disk the inbox through which `npm run keys` reaches them.
 */
export interface GatewayKeys {
  keys: KeyStore;
  devKey?: ProvisionedKey;
  database: () => Promise<void>;
  close(): Promise<void>;
}

/** Opens the gateway's key database and provisions the configured keys (the first start's dev key in standalone). */
export async function openGatewayKeys(
  cfg: GatewayConfig,
  logger: Logger,
  clock?: StartOptions['clock'],
): Promise<GatewayKeys> {
  const { db, keys } = await openKeyStore(cfg, logger);
  const keyStore = clock ? new KeyStore(db.knex, () => clock.now()) : keys;
  try {
    const devKey = await provisionKeys(keyStore, cfg.VISION_API_KEYS ?? [], cfg.VISION_MODE === 'standalone');
    // Standalone on disk: `npm run keys` reaches this process's key database through the inbox.
    const inbox: KeysInbox | undefined =
      db.kind === 'pglite' && cfg.VISION_DATA_DIR !== ':memory:'
        ? openKeysInbox({ dataDir: cfg.VISION_DATA_DIR, keys: keyStore, logger })
        : undefined;
    return {
      keys: keyStore,
      devKey,
      database: () => db.check(),
      async close() {
        await inbox?.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

/** What the gateway's HTTP side needs besides its configuration: where its keys are looked up. */
export interface EdgeOptions {
  logger: Logger;
  keys: KeyLookup;
  database: () => Promise<void>;
  port?: number;
  host?: string;
}

/**
 * Starts the gateway's HTTP side (limiter, door, forwarder, app) on keys held elsewhere: the key store
 * of this process, or in the standalone process the one of the main thread (apps/standalone).
 */
export async function startEdge(cfg: GatewayConfig, opts: EdgeOptions): Promise<RunningService> {
  const { logger } = opts;
  const { signer } = loadCallingIdentity(cfg.VISION_IDENTITY_DIR, 'gateway');
  const openapi = loadOpenApi(resolveOpenApiFile(cfg.GATEWAY_OPENAPI_FILE));
  const limiter = createLimiter(cfg, { logger, keyPrefix: gatewayKeyPrefix(cfg.GATEWAY_REDIS_PREFIX) });
  const { app, forward, readiness, unwatch } = createGateway({
    cfg,
    signer,
    logger,
    database: opts.database,
    keys: opts.keys,
    limiter,
    openapi,
  });
  // Expect: 100-continue is judged on the head: `100 Continue` only for an admitted call.
  const server = await listen(app, opts.port ?? cfg.PORT, opts.host ?? cfg.HOST, {
    judgeExpect: true,
    keepAliveTimeoutMs: cfg.GATEWAY_KEEPALIVE_MS,
  }).catch(async (err: unknown) => {
    unwatch();
    forward.close();
    await limiter.close();
    throw err;
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : cfg.PORT;
  return {
    name: 'gateway',
    port,
    url: `http://127.0.0.1:${port}`,
    readiness,
    async close() {
      await closeServer(server);
      unwatch();
      forward.close();
      await limiter.close();
    },
  };
}

/** Starts the gateway: config, key database (schema `gateway`), keys at start, limiter, HTTP. */
export async function start(opts: StartOptions = {}): Promise<RunningGateway> {
  const cfg = loadGatewayConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger('gateway', { level: cfg.LOG_LEVEL });
  const held = await openGatewayKeys(cfg, logger, opts.clock);
  let edge: RunningService;
  try {
    edge = await startEdge(cfg, {
      logger,
      keys: held.keys,
      database: held.database,
      port: opts.port,
      host: opts.host,
    });
  } catch (err) {
    await held.close();
    throw err;
  }
  return {
    ...edge,
    devKey: held.devKey,
    keys: held.keys,
    async close() {
      await edge.close();
      await held.close();
    },
  };
}
