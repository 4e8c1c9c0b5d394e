import type { Bus } from '../bus/port';
import type { Clock } from '../time/clock';
import type { ReadinessReport } from '../edge/http';
import type { Logger } from '../telemetry/logger';
import type { LocalCalls } from '../calls/local-calls';
import { ConfigError, commonShape, exitOnConfigError, loadConfig } from '../config/config';
import { startMetricsServer } from './metrics-server';
import { installCrashHandler } from '../edge/crash-handler';
import { createLogger } from '../telemetry/logger';
import { drainServers } from '../edge/server';
// Type only: the module itself is required lazily in runMain.
import type * as Telemetry from '../telemetry/telemetry';

/** How the standalone launcher (or a test) starts one service inside the current process. */
export interface StartOptions {
  /** Environment to read configuration from; defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** A bus instance to share (standalone mode runs one in-process bus for all services). */
  bus?: Bus;
  clock?: Clock;
  logger?: Logger;
  /** Port to listen on; 0 picks a free one (tests). Overrides the service's *_PORT variable. */
  port?: number;
  host?: string;
  /**
   * The services of this process that answer calls in it (standalone): a service registers its answerer,
   * and its clients built with the registry skip the HTTP hop.
   */
  local?: LocalCalls;
}

export interface RunningService {
  name: string;
  port: number;
  /** Base URL, e.g. http://127.0.0.1:8101 */
  url: string;
  /** The full readiness report, served on the metrics port when the public /readyz says less. */
  readiness?: () => Promise<ReadinessReport>;
  close(): Promise<void>;
}

/**
 * Process entry for one service (`main.ts`): starts telemetry before anything else is loaded, starts
 * the service and its metrics endpoint (METRICS_PORT, default 9464), and stops them cleanly on SIGTERM/SIGINT. A configuration error exits with status 2 and
 * a message naming the variable.
 */
export function runMain(serviceName: string, start: (opts: StartOptions) => Promise<RunningService>): void {
  // Loaded lazily so that instrumentation patches modules before the service imports them.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTelemetry } = require('../telemetry/telemetry') as typeof Telemetry;
  const telemetry = startTelemetry(serviceName);
  installCrashHandler(createLogger(serviceName));
  const cfg = exitOnConfigError(() =>
    loadConfig({
      METRICS_PORT: commonShape.METRICS_PORT,
      METRICS_HOST: commonShape.METRICS_HOST,
      SHUTDOWN_DRAIN_MS: commonShape.SHUTDOWN_DRAIN_MS,
    }),
  );
  const metricsPort = async (svc: RunningService) => {
    return startMetricsServer(cfg.METRICS_PORT, cfg.METRICS_HOST ?? '0.0.0.0', {
      readiness: svc.readiness,
    });
  };
  // Handled from the first moment: as a container's PID 1, a process without a handler ignores SIGTERM, so a
  // stop asked for while the service starts would wait for SIGKILL. Such a stop is carried out once it started.
  let stop: ((signal: string) => void) | undefined;
  let asked: string | undefined;
  const onSignal = (signal: string) => {
    if (stop) return stop(signal);
    if (!asked) process.stdout.write(`${serviceName}: ${signal} while starting, stopping once started\n`);
    asked ??= signal;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  start({})
    .then(async (svc) => [svc, await metricsPort(svc)] as const)
    .then(([svc, metricsServer]) => {
      process.stdout.write(`${serviceName} listening on ${svc.url}, metrics at ${metricsServer.url}\n`);
      let stopping = false;
      stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stdout.write(`${serviceName}: ${signal}, stopping\n`);
        drainServers(cfg.SHUTDOWN_DRAIN_MS)
          .then(() => svc.close())
          .then(() => metricsServer.close())
          .then(() => telemetry.shutdown())
          .then(() => process.exit(0))
          .catch(() => process.exit(1));
      };
      if (asked) stop(asked);
    })
    .catch((err: unknown) => {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(2);
      }
      process.stderr.write(
        `${serviceName} failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
      );
      process.exit(1);
    });
}
