/** The webhook part of the results service: stores, use cases, the fan-out consumer, the dispatcher, the announcer. */
import {
  metrics,
  streamResolver,
  type Bus,
  type Clock,
  type Db,
  type Logger,
  type Subscription,
} from '@vision/shared';
import type { ResolvedResultsConfig } from './config';
import type { CursorCodec } from './domain/cursor';
import { webhookSecretBox } from './domain/webhooks/signing';
import type { WebhookRouteDeps } from './http/webhook-routes';
import { WebhookDeliveriesStore } from './store/webhook-deliveries-store';
import { WebhookEndpointsStore } from './store/webhook-endpoints-store';
import { WebhookDeliveries } from './use-cases/webhooks/deliveries';
import { WebhookEndpoints } from './use-cases/webhooks/endpoints';
import type { Egress } from './use-cases/webhooks/send-attempt';
import { FramesAnnouncer } from './workers/frames-announcer';
import { WebhookDispatcher } from './workers/webhook-dispatcher';
import { subscribeFanout, type FanoutDeps } from './workers/webhook-fanout';

export interface WebhookParts {
  routes: WebhookRouteDeps;
  endpoints: WebhookEndpointsStore;
  deliveries: WebhookDeliveriesStore;
  dispatcher: WebhookDispatcher;
  announcer: FramesAnnouncer;
  /** What writes deliveries of events (the analytics runner writes those of zone and line events). */
  fanout: FanoutDeps;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createWebhooks(deps: {
  db: Db;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  cfg: ResolvedResultsConfig;
  cursors: CursorCodec;
}): WebhookParts {
  const { db, bus, clock, logger, cfg } = deps;
  const endpoints = new WebhookEndpointsStore(db.knex);
  const deliveries = new WebhookDeliveriesStore(db.knex);
  const box = webhookSecretBox(cfg.webhookSealKey);
  const egress: Egress = {
    allowPrivate: cfg.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    resolve: streamResolver({ servers: cfg.STREAM_DNS_SERVERS, timeoutMs: cfg.STREAM_DNS_TIMEOUT_MS }),
    timeoutMs: cfg.RESULTS_WEBHOOK_TIMEOUT_MS,
  };
  const horizonMs = cfg.RESULTS_WEBHOOK_RETRY_HORIZON_MS;
  const dispatcher = new WebhookDispatcher({
    deliveries,
    endpoints,
    box,
    clock,
    logger,
    egress,
    policy: { baseMs: cfg.RESULTS_WEBHOOK_RETRY_BASE_MS, maxMs: cfg.RESULTS_WEBHOOK_RETRY_MAX_MS, horizonMs },
    concurrency: cfg.RESULTS_WEBHOOK_CONCURRENCY,
    pollMs: cfg.RESULTS_WEBHOOK_POLL_MS,
  });
  const wake = () => dispatcher.wake();
  const fanout: FanoutDeps = { endpoints, deliveries, clock, logger, horizonMs, wake };
  const announcer = new FramesAnnouncer({
    ...fanout,
    knex: db.knex,
    cursors: deps.cursors,
    intervalMs: cfg.RESULTS_WEBHOOK_FRAMES_INTERVAL_MS,
  });
  const routes: WebhookRouteDeps = {
    endpoints: new WebhookEndpoints({
      endpoints,
      box,
      clock,
      egress,
      maxEndpoints: cfg.RESULTS_WEBHOOK_MAX_ENDPOINTS,
      rotationOverlapMs: cfg.RESULTS_WEBHOOK_ROTATION_OVERLAP_MS,
    }),
    deliveries: new WebhookDeliveries({ endpoints, deliveries, clock, horizonMs, wake }),
  };
  let subs: Subscription[] = [];
  const removers: Array<() => void> = [];
  return {
    routes,
    endpoints,
    deliveries,
    dispatcher,
    announcer,
    fanout,
    async start() {
      subs = await subscribeFanout(bus, fanout);
      dispatcher.start();
      announcer.start();
      const counts = () => deliveries.counts();
      removers.push(
        metrics.webhookBacklog.addSource(async () => {
          const c = await counts();
          return [
            [{ state: 'pending' }, c.pending],
            [{ state: 'retrying' }, c.retrying],
          ];
        }),
        metrics.webhookDead.addSource(async () => [[{}, (await counts()).dead]]),
      );
    },
    async stop() {
      for (const r of removers.splice(0)) r();
      await announcer.stop();
      await Promise.allSettled(subs.map((s) => s.close()));
      await dispatcher.stop();
    },
  };
}
