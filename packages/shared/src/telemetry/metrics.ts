import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { currentService } from './service-context';

/**
 * Every metric, in one Prometheus registry per thread (the standalone gateway's thread sends its own to the
 * process's /metrics), each family labelled `service` and documented in docs/OPERATIONS.md (a test checks).
 */
export const metricsRegistry = new Registry();

let processMetrics = false;
/**
 * Adds the process's own series (`vision_process_*`: CPU, memory, event loop lag of the thread that serves
 * /metrics, GC) to the registry, once. Called by that thread, not at import: prom-client's collectors register
 * a GC PerformanceObserver and an event-loop delay monitor for the life of the process, and a module that
 * merely imports this file (every jest test file) would stay reachable from them forever (12 GB once).
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry, prefix: 'vision_process_' });
}

type Values<L extends string> = Record<L, string | number>;

/** A counter whose `service` label is the current service. */
export class ServiceCounter<L extends string = never> {
  readonly family: Counter<L | 'service'>;
  constructor(name: string, help: string, labels: readonly L[] = []) {
    this.family = new Counter({
      name,
      help,
      labelNames: ['service', ...labels],
      registers: [metricsRegistry],
    });
  }
  inc(labels: Values<L>, n = 1): void {
    this.family.inc({ service: currentService(), ...labels } as Values<L | 'service'>, n);
  }
}

/** A histogram whose `service` label is the current service. */
export class ServiceHistogram<L extends string = never> {
  readonly family: Histogram<L | 'service'>;
  constructor(name: string, help: string, labels: readonly L[], buckets: number[]) {
    this.family = new Histogram({
      name,
      help,
      labelNames: ['service', ...labels],
      buckets,
      registers: [metricsRegistry],
    });
  }
  observe(labels: Values<L>, seconds: number): void {
    this.family.observe({ service: currentService(), ...labels } as Values<L | 'service'>, seconds);
  }
}

type Source<L extends string> = () => Promise<Array<[Values<L>, number]>> | Array<[Values<L>, number]>;

/**
 * A gauge set directly (set()) or read at scrape time from sources a service registers (addSource()),
 * for example the count of tasks by status from the database. Values are per service.
 */
export class ServiceGauge<L extends string = never> {
  readonly family: Gauge<L | 'service'>;
  private readonly sources = new Map<object, { service: string; read: Source<L> }>();
  constructor(name: string, help: string, labels: readonly L[] = []) {
    const sources = this.sources;
    this.family = new Gauge({
      name,
      help,
      labelNames: ['service', ...labels],
      registers: [metricsRegistry],
      async collect() {
        for (const { service, read } of sources.values()) {
          try {
            for (const [labels, v] of await read())
              this.set({ service, ...labels } as Values<L | 'service'>, v);
          } catch {
            // A source that cannot be read (database down) keeps its last values.
          }
        }
      },
    });
  }
  set(labels: Values<L>, value: number): void {
    this.family.set({ service: currentService(), ...labels } as Values<L | 'service'>, value);
  }
  inc(labels: Values<L>, n = 1): void {
    this.family.inc({ service: currentService(), ...labels } as Values<L | 'service'>, n);
  }
  /** Reads `read` at every scrape under the current service; returns the function that removes it. */
  addSource(read: Source<L>): () => void {
    const token = {};
    this.sources.set(token, { service: currentService(), read });
    return () => this.sources.delete(token);
  }
}

const LATENCY = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const metrics = {
  // HTTP servers (each service's app, the gateway included).
  httpDuration: new ServiceHistogram(
    'vision_http_server_request_duration_seconds',
    'Time to answer an HTTP request, by route template, method and status code',
    ['method', 'route', 'status_code'],
    LATENCY,
  ),
  // Calls to other services (ServiceClient, the inference client).
  upstreamDuration: new ServiceHistogram(
    'vision_upstream_request_duration_seconds',
    'Duration of calls to another service, by upstream and outcome (ok, error, timeout, unreachable)',
    ['upstream', 'outcome'],
    LATENCY,
  ),
  upstreamTimeouts: new ServiceCounter(
    'vision_upstream_timeouts_total',
    'Calls to another service abandoned because they took longer than their timeout',
    ['upstream'],
  ),
  breakerState: new ServiceGauge(
    'vision_breaker_state',
    'Circuit breaker state per upstream: 1 for the current state (closed, open, half_open), 0 for the others',
    ['upstream', 'state'],
  ),
  breakerTransitions: new ServiceCounter(
    'vision_breaker_transitions_total',
    'Circuit breaker state changes, by upstream and the state entered',
    ['upstream', 'state'],
  ),
  // Tasks.
  tasks: new ServiceGauge('vision_tasks', 'Tasks by status (read from the database at scrape time)', [
    'status',
  ]),
  taskTransitions: new ServiceCounter(
    'vision_task_transitions_total',
    'Task status changes, by previous and new status (including resolving and refunded)',
    ['from', 'to'],
  ),
  // Quota.
  quotaCharges: new ServiceCounter('vision_quota_charges_total', 'Units charged, by kind (video, image)', [
    'kind',
  ]),
  quotaRefunds: new ServiceCounter('vision_quota_refunds_total', 'Units refunded, by kind', ['kind']),
  quotaHolds: new ServiceCounter(
    'vision_quota_holds_total',
    'Quota holds, by kind and outcome (placed, settled, expired)',
    ['kind', 'outcome'],
  ),
  quotaExhausted: new ServiceCounter(
    'vision_quota_exhausted_total',
    'Requests refused because the subject had no quota left, by kind',
    ['kind'],
  ),
  quotaLeasesOpen: new ServiceGauge('vision_quota_leases_open', 'Quota leases this process holds now'),
  quotaChargesUnreported: new ServiceGauge(
    'vision_quota_charges_unreported',
    'Calls answered whose charge this process has not yet reported to quota',
  ),
  // Inference.
  inferenceActiveJobs: new ServiceGauge('vision_inference_active_jobs', 'Video jobs running now'),
  framesDecoded: new ServiceCounter(
    'vision_inference_frames_decoded_total',
    'Video frames decoded, by scene',
    ['scene'],
  ),
  framesPublished: new ServiceCounter(
    'vision_inference_frames_published_total',
    'Result frames published to vision.frames, by scene',
    ['scene'],
  ),
  framesDropped: new ServiceCounter(
    'vision_inference_frames_dropped_total',
    'Decoded frames not analysed or not published, by scene and reason',
    ['scene', 'reason'],
  ),
  modelLatency: new ServiceHistogram(
    'vision_inference_model_latency_seconds',
    'onnxruntime time for one frame or image, by model file',
    ['model'],
    [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
  ),
  decoderRestarts: new ServiceCounter(
    'vision_inference_decoder_restarts_total',
    'Video decoder (ffmpeg) restarts of running jobs, by reason',
    ['reason'],
  ),
  // Results, its webhooks included.
  ingestLag: new ServiceHistogram(
    'vision_results_ingest_lag_seconds',
    'Time from a frame being captured to its result being stored',
    [],
    [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  ),
  framesRefused: new ServiceCounter('vision_results_frames_refused_total', 'Frames refused', ['reason']),
  webhookAttempts: new ServiceCounter(
    'vision_webhook_attempts_total',
    'Webhook delivery attempts, by outcome (delivered, http_error, rate_limited, gone, redirect, timeout, unreachable, refused_address, secret_unavailable)',
    ['outcome'],
  ),
  webhookDeliveries: new ServiceCounter(
    'vision_webhook_deliveries_total',
    'Webhook deliveries that ended, by result (delivered, dead, endpoint_disabled)',
    ['result'],
  ),
  webhookAttemptDuration: new ServiceHistogram(
    'vision_webhook_attempt_duration_seconds',
    'Time of one webhook delivery attempt (resolve, connect, send, status line), by outcome',
    ['outcome'],
    LATENCY,
  ),
  webhookBacklog: new ServiceGauge(
    'vision_webhook_backlog',
    'Webhook deliveries not yet delivered, by state (pending: all of them; retrying: those with a failed attempt), read at scrape time',
    ['state'],
  ),
  webhookDead: new ServiceGauge(
    'vision_webhook_dead_deliveries',
    'Dead webhook deliveries kept in the delivery log (retries given up after the horizon), read at scrape time',
  ),
  // Message bus (both adapters).
  busPublished: new ServiceCounter(
    'vision_bus_messages_published_total',
    'Messages published to the bus, by topic',
    ['topic'],
  ),
  busConsumed: new ServiceCounter(
    'vision_bus_messages_consumed_total',
    'Messages handled from the bus, by topic and consumer group',
    ['topic', 'group'],
  ),
  consumerLag: new ServiceGauge(
    'vision_bus_consumer_lag_messages',
    'Messages published but not yet handled by a consumer group, by topic and partition',
    ['topic', 'group', 'partition'],
  ),
  // Gateway.
  authFailures: new ServiceCounter(
    'vision_gateway_auth_failures_total',
    'Requests refused for missing or invalid credentials, by reason (missing, malformed, unknown_key)',
    ['reason'],
  ),
  rateLimited: new ServiceCounter(
    'vision_gateway_rate_limit_rejections_total',
    'Requests refused by the per-subject limits, by reason (qps, concurrency)',
    ['reason'],
  ),
  // Admission queues in front of inference (admission/admission-queue.ts), by queue.
  admissionShed: new ServiceCounter(
    'vision_admission_shed_total',
    'Calls refused or dropped before they started, by queue and reason (overloaded, deadline, evicted, waited, client_gone)',
    ['queue', 'reason'],
  ),
  admissionWait: new ServiceHistogram(
    'vision_admission_queue_wait_seconds',
    'Time a call waited for its turn before it started, by queue',
    ['queue'],
    LATENCY,
  ),
  admissionInFlight: new ServiceGauge(
    'vision_admission_in_flight',
    'Calls running now, by queue (the signal to autoscale on)',
    ['queue'],
  ),
  admissionLimit: new ServiceGauge(
    'vision_admission_limit',
    'Calls that may run at once now, by queue (maxInFlight, or the adaptive limit with ADMISSION_LIMIT=gradient)',
    ['queue'],
  ),
  upstreamQueued: new ServiceGauge(
    'vision_gateway_upstream_queued',
    'Requests the gateway holds waiting for a connection to an upstream, by upstream',
    ['upstream'],
  ),
  gatewayLoopDelay: new ServiceGauge(
    'vision_gateway_event_loop_delay_seconds',
    "Delay of the gateway's event loop since the last scrape (beyond its 10 ms sampling), by quantile (0.5, 0.99, max)",
    ['quantile'],
  ),
  admissionQueued: new ServiceGauge('vision_admission_queued', 'Calls waiting for their turn now, by queue', [
    'queue',
  ]),
  // The process-wide handler (crash-handler.ts): counted, then the process exits.
  fatalErrors: new ServiceCounter(
    'vision_fatal_errors_total',
    'Errors that reached the process-wide handler, by kind (uncaught_exception, unhandled_rejection); the process then exits',
    ['kind'],
  ),
};

/** The states of vision_breaker_state. */
export const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

/** Records a breaker entering `state` (gauge one-hot, transition counted). */
export function recordBreakerState(upstream: string, state: BreakerState, transition = true): void {
  for (const s of BREAKER_STATES) metrics.breakerState.set({ upstream, state: s }, s === state ? 1 : 0);
  if (transition) metrics.breakerTransitions.inc({ upstream, state });
}
