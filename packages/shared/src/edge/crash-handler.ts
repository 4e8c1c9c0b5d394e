import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '../telemetry/logger';
import { metrics } from '../telemetry/metrics';

/** The request a piece of work belongs to, set by requestIdMiddleware for all that runs on its behalf. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** The exit status of a process stopped by an error nothing handled (EX_SOFTWARE). */
export const FATAL_EXIT_CODE = 70;

/** What the handler listens on: the process, or (in tests) the real process behind a sandbox's copy. */
export type FatalEventSource = Pick<NodeJS.EventEmitter, 'on' | 'off'>;

const installedOn = new WeakSet<FatalEventSource>();

/**
 * The one process-wide handler for `uncaughtException` and `unhandledRejection`. Crash-only: it logs
 * the error with the request id when the failing work belonged to a request, counts it in
 * vision_fatal_errors_total, and exits with FATAL_EXIT_CODE so that the orchestrator (Kubernetes, the
 * compose restart policy) starts a clean process. Nothing a client does with its connection may reach
 * it: the in-process test stack installs it with an exit that records, and fails when it was reached.
 * Installing it twice on one source is a no-op. Returns a function that removes it.
 */
export function installCrashHandler(
  logger: Logger,
  exit: (code: number) => void = process.exit,
  source: FatalEventSource = process,
): () => void {
  if (installedOn.has(source)) return () => undefined;
  installedOn.add(source);
  const fatal = (kind: 'uncaught_exception' | 'unhandled_rejection') => (err: unknown) => {
    const requestId = requestContext.getStore()?.requestId;
    try {
      metrics.fatalErrors.inc({ kind });
      logger.fatal({ err, kind, ...(requestId ? { request_id: requestId } : {}) }, 'fatal error; exiting');
    } finally {
      exit(FATAL_EXIT_CODE);
    }
  };
  const onException = fatal('uncaught_exception');
  const onRejection = fatal('unhandled_rejection');
  source.on('uncaughtException', onException);
  source.on('unhandledRejection', onRejection);
  return () => {
    source.off('uncaughtException', onException);
    source.off('unhandledRejection', onRejection);
    installedOn.delete(source);
  };
}
