import type { Express } from 'express';
import { type Logger, type ObjectStore, type ReadinessCheck, createServiceApp } from '@vision/shared';
import type { SceneCatalogue } from './scene-catalogue';
import type { TaskEngine } from './task-engine';
import type { TaskStore } from './store/task-store';
import { mountPublicRoutes, type PublicRouteDeps } from './routes/public-routes';
import { ADMIN_PREFIX, mountInternalRoutes } from './routes/internal-routes';
import { mountUploadDownload } from './http/upload-download';

export interface AppDeps {
  logger: Logger;
  identitySecret: string;
  engine: TaskEngine;
  store: TaskStore;
  scenes: SceneCatalogue;
  objects: ObjectStore;
  clock: { now(): Date };
  readiness?: Record<string, ReadinessCheck>;
  adminToken?: string;
  settings: PublicRouteDeps['settings'];
}

export function createApp(d: AppDeps): Express {
  return createServiceApp(
    {
      name: 'tasks',
      logger: d.logger,
      identitySecret: d.identitySecret,
      publicPaths: [ADMIN_PREFIX],
      readiness: d.readiness,
    },
    (app) => {
      mountPublicRoutes(app, d);
      mountUploadDownload(app, d);
      mountInternalRoutes(app, {
        engine: d.engine,
        store: d.store,
        scenes: d.scenes,
        clock: d.clock,
        adminToken: d.adminToken,
        businessThreshold: d.settings.businessThreshold,
        retentionDays: d.settings.retentionDays,
      });
    },
  );
}
