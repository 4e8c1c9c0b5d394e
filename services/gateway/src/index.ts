import {
  closeServer,
  createLimiter,
  createLogger,
  listen,
  openDb,
  type RunningService,
  type StartOptions,
} from '@vision/shared';
import { createApp } from './app';
import { createForwarder } from './proxy';
import { loadGatewayConfig, type GatewayConfig } from './config';
import { KeyStore, keyMigrations } from './keys/key-store';
import { loadOpenApi, resolveOpenApiFile } from './openapi';
import { resolveConsoleDir } from './console';

export { createApp } from './app';
export { KeyStore, keyMigrations } from './keys/key-store';
export { matchRoute } from './domain/routes';
export { parseBearer, hashKey, generateKey } from './keys/key-format';
export { loadGatewayConfig, type GatewayConfig } from './config';

export interface RunningGateway extends RunningService {
  /** Set when this start created the first (development) key; it is shown once and only its hash is kept. */
  devKey?: { keyId: string; key: string; subject: string };
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

export async function start(opts: StartOptions = {}): Promise<RunningGateway> {
  const cfg = loadGatewayConfig(opts.env ?? process.env);
  const logger = opts.logger ?? createLogger('gateway', { level: cfg.LOG_LEVEL });
  if (!cfg.INTERNAL_SECRET) throw new Error('INTERNAL_SECRET is required (at least 16 characters)');
  const openapi = loadOpenApi(resolveOpenApiFile(cfg.GATEWAY_OPENAPI_FILE));
  const { db, keys } = await openKeyStore(cfg, logger);
  const clockNow = opts.clock ? () => opts.clock!.now() : undefined;
  const keyStore = clockNow ? new KeyStore(db.knex, clockNow) : keys;

  for (const { key, subject } of cfg.VISION_API_KEYS ?? []) await keyStore.ensureConfigured(key, subject);
  let devKey: RunningGateway['devKey'];
  // A first-try convenience of standalone mode only; distributed deployments manage keys with the CLI.
  if (cfg.VISION_MODE === 'standalone' && !cfg.VISION_API_KEYS?.length && (await keyStore.count()) === 0) {
    const created = await keyStore.create('dev', 'dev');
    devKey = { ...created, subject: 'dev' };
  }

  const limiter = createLimiter(cfg, { logger, keyPrefix: 'gw' });
  const forward = createForwarder(logger, {
    timeoutMs: cfg.GATEWAY_UPSTREAM_TIMEOUT_MS,
    pooledSockets: cfg.GATEWAY_UPSTREAM_SOCKETS,
  });
  const app = createApp({
    logger,
    keys: keyStore,
    authCacheMs: cfg.GATEWAY_AUTH_CACHE_MS,
    limiter,
    internalSecret: cfg.INTERNAL_SECRET,
    upstreams: {
      tasks: cfg.TASKS_URL,
      quota: cfg.QUOTA_URL,
      results: cfg.RESULTS_URL,
      images: cfg.IMAGES_URL,
    },
    limits: { qps: cfg.GATEWAY_QPS, burst: cfg.GATEWAY_BURST, concurrency: cfg.GATEWAY_CONCURRENCY },
    limitOverrides: cfg.GATEWAY_LIMIT_OVERRIDES,
    forward,
    openapi,
    consoleDir: resolveConsoleDir(cfg.GATEWAY_CONSOLE_DIR),
    readiness: { database: () => db.check(), limiter: () => limiter.check() },
  });
  const server = await listen(app, opts.port ?? cfg.PORT, opts.host ?? cfg.HOST);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : cfg.PORT;
  return {
    name: 'gateway',
    port,
    url: `http://127.0.0.1:${port}`,
    devKey,
    keys: keyStore,
    async close() {
      await closeServer(server);
      forward.close();
      await limiter.close();
      await db.close();
    },
  };
}
