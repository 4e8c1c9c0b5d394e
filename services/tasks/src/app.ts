import type { Express } from 'express';
import {
  type Logger,
  type ObjectStore,
  type ReadinessCheck,
  type SceneGate,
  createServiceApp,
} from '@vision/shared';
import type { TaskEngine } from './task-engine';
import type { TaskStore } from './store/task-store';
import { mountPublicRoutes, type PublicRouteDeps } from './routes/public-routes';
import { ADMIN_PREFIX, mountInternalRoutes } from './routes/internal-routes';

export interface AppDeps {
  logger: Logger;
  identitySecret: string;
  engine: TaskEngine;
  store: TaskStore;
  scenes: SceneGate;
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
