import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  closeServer,
  createLimiter,
  createLogger,
  listen,
  startMetricsServer,
  type MetricsServer,
} from '@vision/shared';
import { createGateway, loadGatewayConfig, openKeyStore, start } from '../src/index';
import { identityDir, signerOf } from '../../../test/helpers/identity';

const logger = createLogger('test', { level: 'silent' });

/** The public /readyz says up or down; which dependency failed, and why, is on the internal port only. */
describe('gateway readiness', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-readiness-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const get = async (url: string) => {
    const r = await fetch(url);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  it('answers up and nothing more; the internal port lists each dependency', async () => {
    const gw = await start({
      env: { VISION_DATA_DIR: dataDir, VISION_IDENTITY_DIR: identityDir(), LOG_LEVEL: 'silent' },
      port: 0,
      host: '127.0.0.1',
      logger,
    });
    const internal = await startMetricsServer(0, '127.0.0.1', { readiness: gw.readiness });
    try {
      expect(await get(`${gw.url}/readyz`)).toEqual({ status: 200, body: { status: 'up' } });
      expect(await get(internal.url.replace('/metrics', '/readyz'))).toEqual({
        status: 200,
        body: { status: 'up', dependencies: { database: { status: 'up' }, limiter: { status: 'up' } } },
      });
    } finally {
      await internal.close();
      await gw.close();
    }
  });

  it('answers 503 down with no error text when the key database is gone', async () => {
    const cfg = loadGatewayConfig({
      VISION_DATA_DIR: dataDir,
      VISION_IDENTITY_DIR: identityDir(),
      LOG_LEVEL: 'silent',
    });
    const { db, keys } = await openKeyStore(cfg, logger);
    const limiter = createLimiter(cfg, { logger, keyPrefix: 'gw' });
    const { app, forward, readiness } = createGateway({
      cfg,
      signer: signerOf('gateway'),
      logger,
      database: () => db.check(),
      keys,
      limiter,
      openapi: {},
    });
    let server: Server | undefined;
    let internal: MetricsServer | undefined;
    try {
      server = await listen(app, 0, '127.0.0.1');
      internal = await startMetricsServer(0, '127.0.0.1', { readiness });
      await db.close();
      const pub = await get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
      expect(pub).toEqual({ status: 503, body: { status: 'down' } });
      const detail = await get(internal.url.replace('/metrics', '/readyz'));
      expect(detail.status).toBe(503);
      const database = (detail.body.dependencies as Record<string, { status: string; error?: string }>)
        .database;
      expect(database.status).toBe('down');
      expect(database.error).toEqual(expect.any(String));
    } finally {
      await internal?.close();
      if (server) await closeServer(server);
      forward.close();
      await limiter.close();
    }
  });
});
