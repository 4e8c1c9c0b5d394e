import type { Express } from 'express';
import {
  type AdmissionQueue,
  createServiceApp,
  type Logger,
  type ReadinessCheck,
  type IdentityVerifier,
} from '@vision/shared';
import type { SceneCatalogue } from '../catalogue/catalogue';
import type { JobManager } from '../jobs/job-manager';
import { type DetectCall, createDetectCall } from '../detect/detect-call';
import { mountDetectRoutes } from './detect-routes';
import { mountJobRoutes } from './job-routes';
import type { OwnedJobs } from '../ownership/owned-jobs';

export interface AppDeps {
  logger: Logger;
  catalogue: SceneCatalogue;
  jobs: JobManager;
  /** Video jobs shared by every job-running replica (ownership/); without it, jobs live in this process only. */
  owned?: OwnedJobs;
  /** Its callers' public keys: every route but /healthz and /readyz requires the signed identity, in every mode. */
  identity: IdentityVerifier;
  maxImagePixels: number;
  /** The detect call, when it is shared with another way in (the in-process answerer); else one of its own. */
  detect?: DetectCall;
  /** The bounded, fair queue detect requests wait in for their turn. */
  admission: AdmissionQueue;
  readiness?: Record<string, ReadinessCheck>;
}

export function createApp(deps: AppDeps): Express {
  return createServiceApp(
    {
      name: 'inference',
      logger: deps.logger,
      identity: deps.identity,
      readiness: deps.readiness,
    },
    (app) => {
      mountDetectRoutes(app, {
        catalogue: deps.catalogue,
        detect:
          deps.detect ?? createDetectCall({ catalogue: deps.catalogue, maxPixels: deps.maxImagePixels }),
        admission: deps.admission,
        videoStatus: () => deps.jobs.videoStatus(),
      });
      mountJobRoutes(app, deps.jobs, deps.owned);
    },
  );
}
