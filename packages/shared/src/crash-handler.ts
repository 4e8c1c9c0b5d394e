import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from './logger';
import { metrics } from './metrics';

/** The request a piece of work belongs to, set by requestIdMiddleware for all that runs on its behalf. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** The exit status of a process stopped by an error nothing handled (EX_SOFTWARE). */
export const FATAL_EXIT_CODE = 70;

let installed = false;

/**
 * The one process-wide handler for `uncaughtException` and `unhandledRejection`. Crash-only: it logs
 * the error with the request id when the failing work belonged to a request, counts it in
 * vision_fatal_errors_total, and exits with FATAL_EXIT_CODE so that the orchestrator (Kubernetes, the
 * compose restart policy) starts a clean process. Nothing a client does with its connection may reach
 * it: the transport tests run the services with it installed and check that it never fired.
 */
export function installCrashHandler(logger: Logger, exit: (code: number) => void = process.exit): void {
  if (installed) return;
  installed = true;
  const fatal = (kind: 'uncaught_exception' | 'unhandled_rejection') => (err: unknown) => {
    const requestId = requestContext.getStore()?.requestId;
    try {
      metrics.fatalErrors.inc({ kind });
      logger.fatal({ err, kind, ...(requestId ? { request_id: requestId } : {}) }, 'fatal error; exiting');
    } finally {
      exit(FATAL_EXIT_CODE);
    }
  };
  process.on('uncaughtException', fatal('uncaught_exception'));
  process.on('unhandledRejection', fatal('unhandled_rejection'));
}
