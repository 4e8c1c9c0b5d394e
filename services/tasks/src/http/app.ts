import type { Express } from 'express';
import { type Logger, type ReadinessCheck, createServiceApp, type IdentityVerifier } from '@vision/shared';
import { ADMIN_PREFIX, mountAdminRoutes } from './admin-routes';
import { mountCreateRoutes } from './create-routes';
import type { HttpDeps } from './deps';
import { mountInternalRoutes } from './internal-routes';
import { mountRulesRoutes } from './rules-routes';
import { mountSnapshotRoute } from './snapshot-route';
import { mountTaskRoutes } from './task-routes';
import { mountUploadDownload } from './upload-download';

export interface AppOptions {
  logger: Logger;
  identity: IdentityVerifier;
  readiness?: Record<string, ReadinessCheck>;
}

export function createApp(o: AppOptions, d: HttpDeps): Express {
  return createServiceApp(
    {
      name: 'tasks',
      logger: o.logger,
      identity: o.identity,
      publicPaths: [ADMIN_PREFIX],
      readiness: o.readiness,
    },
    (app) => {
      mountCreateRoutes(app, d);
      mountTaskRoutes(app, d);
      mountRulesRoutes(app, d);
      mountSnapshotRoute(app, d);
      mountUploadDownload(app, { store: d.ctx.store, objects: d.objects });
      mountInternalRoutes(app, d);
      mountAdminRoutes(app, d);
    },
  );
}
