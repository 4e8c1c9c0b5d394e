import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DirectoryObjectStore, InProcessBus, openDb, type Db, type Logger } from '@vision/shared';
import { loadInferenceConfig, migrations, OWNERSHIP_SCHEMA } from '../../src/index';
import { MODELS_DIR, VIDEOS_DIR } from './helpers';

/** What replicas sharing one lease store run on: a data dir, the in-process bus, an object store and the store. */
export interface OwnershipFixture {
  dir: string;
  bus: InProcessBus;
  store: DirectoryObjectStore;
  db: Db;
  close(): Promise<void>;
}

/** A fresh fixture with `clips` (of the shared videos) uploaded under their names. */
export async function ownershipFixture(
  prefix: string,
  logger: Logger,
  clips: readonly string[],
): Promise<OwnershipFixture> {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const bus = new InProcessBus({ logger });
  const store = new DirectoryObjectStore(path.join(dir, 'objects'));
  for (const clip of clips) await store.put(clip, createReadStream(path.join(VIDEOS_DIR, clip)));
  const cfg = loadInferenceConfig({ VISION_DATA_DIR: dir, VISION_MODELS_DIR: MODELS_DIR });
  const db = await openDb(cfg, { schema: OWNERSHIP_SCHEMA, migrations, logger, memory: true });
  return {
    dir,
    bus,
    store,
    db,
    close: async () => {
      await bus.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
