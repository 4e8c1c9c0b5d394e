import { randomUUID } from 'node:crypto';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { ApiError, type ErrorEnvelope, toEnvelope } from '../contract/errors';
import { REASON } from '../contract/reasons';
import type { IdentityVerifier, VerifiedIdentity } from '../identity/identity';
import { identityGuard } from '../identity/identity-guard';
import { type IdentityRoute, identityRoutesOf } from '../identity/identity-routes';
import type { Logger } from '../telemetry/logger';
import { httpMetricsMiddleware } from '../telemetry/http-metrics';
import { requestShapeGuard } from './request-shape';
import { endAfterBody } from './early-answer';
import { UploadAborted } from './multipart';
import { CallerGone } from './in-turn';
import { requestContext } from './crash-handler';

export const REQUEST_ID_HEADER = 'x-request-id';

/** A readiness check resolves when its dependency is reachable and rejects otherwise. */
export type ReadinessCheck = () => Promise<void | { degraded: string }>;

export interface ServiceAppOptions {
  name: string;
  logger: Logger;
  /** Dependencies probed by GET /readyz, by name. */
  readiness?: Record<string, ReadinessCheck>;
  /**
   * Every route except /healthz, /readyz and publicPaths requires a valid signed identity header
   * (identity.ts) for this service, in every mode: there is no service without one. These are the
   * public keys of the services allowed to call this one (identity-keys.ts).
   */
  identity: IdentityVerifier;
  /**
   * The audience the identity header must name: the service's name unless set (a test stand-in for
   * several services lists them).
   */
  audience?: string | readonly string[];
  /**
   * The routes that take an identity and the issuers of each: the route table's routes of the audience
   * unless set (a test app with routes of its own gives them).
   */
  routes?: readonly IdentityRoute[];
  /** Paths (prefixes) that skip identity verification, for example operator endpoints with their own credential. */
  publicPaths?: string[];
  /** Limit for JSON bodies. */
  jsonLimit?: string;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(res: Response): string {
  return (res.locals.requestId as string | undefined) ?? 'unknown';
}

/** The verified caller of a request; throws OP-AUTH-REQUIRED when the request carries none. */
export function identityOf(res: Response): VerifiedIdentity {
  const id = res.locals.identity as VerifiedIdentity | undefined;
  if (!id) throw new ApiError('OP-AUTH-REQUIRED', 'Missing or invalid credentials');
  return id;
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02',
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08006',
]);

/** True for errors that mean a dependency (database, store, broker) could not be reached. */
export function isUnavailableError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  if (
    typeof e.message === 'string' &&
    /Connection terminated|connect ECONNREFUSED|socket hang up/i.test(e.message)
  )
    return true;
  return e.cause !== undefined && e.cause !== err ? isUnavailableError(e.cause) : false;
}

/** Maps any thrown value to an ApiError; unknown errors become a 500 without internals. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: unknown; status?: unknown };
  if (e && e.type === 'entity.parse.failed')
    return new ApiError('OP-TASK-REQUEST-INVALID', 'Request body is not valid JSON', {
      reason: 'malformed_json',
    });
  if (e && e.type === 'entity.too.large')
    return new ApiError('OP-TASK-REQUEST-INVALID', 'Request body is too large', { reason: 'body_too_large' });
  if (e && (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported'))
    return new ApiError('OP-TASK-REQUEST-INVALID', 'Unsupported body encoding', {
      reason: 'unsupported_encoding',
    });
  if (e && e.type === 'request.aborted')
    return new ApiError('OP-TASK-REQUEST-INVALID', 'The request body ended early', {
      reason: REASON.body_truncated,
    });
  // Any other client error raised by express or its parsers (a path parameter that does not decode, a
  // body whose length does not match its header): the request was malformed, not the server.
  const status = typeof e?.status === 'number' ? e.status : undefined;
  if (status !== undefined && status >= 400 && status < 500)
    return new ApiError('OP-TASK-REQUEST-INVALID', 'The request is malformed', {
      reason: REASON.malformed_request,
    });
  if (isUnavailableError(err))
    return new ApiError('OP-SYS-UNAVAILABLE', 'A dependency is unavailable, retry later');
  return new ApiError('OP-SYS-INTERNAL', 'Internal error');
}

/**
 * The answer an error gets: its status, its envelope and its headers (names in lower case), over HTTP
 * (sendError) or to a caller in this process (calls/local-calls.ts).
 */
export function errorAnswer(
  err: ApiError,
  requestId: string,
): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(err.headers ?? {})) headers[k.toLowerCase()] = v;
  // A 503 is always worth retrying (docs/API.md, "Errors"): one that names no wait asks for a second.
  if (err.status === 503 && headers['retry-after'] === undefined) headers['retry-after'] = '1';
  return { status: err.status, body: toEnvelope(err, requestId), headers };
}

export function sendError(res: Response, err: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const answer = errorAnswer(err, requestIdOf(res));
  for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
  const body = JSON.stringify(answer.body);
  res.status(err.status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  // A refusal may come before the request's body has all arrived: early-answer.ts says how it leaves.
  endAfterBody(res.req, res, body);
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // The caller went away: nobody to answer, and no failure of ours to count or log as one.
    if (err instanceof UploadAborted || err instanceof CallerGone || (res.destroyed && !res.headersSent)) {
      logger.debug({ path: req.path, request_id: requestIdOf(res) }, 'caller went away before the answer');
      res.destroy();
      return;
    }
    const apiErr = toApiError(err);
    const reason = apiErr.details?.reason;
    // Load shed on purpose (docs/OVERLOAD.md): counted by the shed and HTTP metrics, logged as a refusal
    // without a stack; at the rate an overload refuses calls, an error line each would cost more than the answer.
    if (reason === REASON.overloaded || reason === REASON.deadline_exceeded)
      logger.info(
        { path: req.path, method: req.method, request_id: requestIdOf(res), code: apiErr.code, reason },
        'request refused',
      );
    else if (apiErr.status >= 500)
      logger.error(
        { err, path: req.path, method: req.method, request_id: requestIdOf(res), code: apiErr.code },
        'request failed',
      );
    sendError(res, apiErr);
  };
}

/** Wraps an async route handler so that rejections reach the error handler. */
export function route(
  fn: (req: Request, res: Response, next: NextFunction) => Promise<unknown>,
): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    fn(req, res, next).catch(next);
  };
}

/** What GET /readyz reports: ready unless a dependency is down, with each dependency's state. */
export interface ReadinessReport {
  ready: boolean;
  body: {
    status: 'up' | 'down' | 'degraded';
    dependencies: Record<string, { status: 'up' | 'down' | 'degraded'; error?: string }>;
  };
}

export async function runReadiness(checks: Record<string, ReadinessCheck>): Promise<ReadinessReport> {
  const detail: ReadinessReport['body']['dependencies'] = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        const r = await Promise.race([
          check(),
          new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timed out')), 3000).unref()),
        ]);
        detail[name] = r && 'degraded' in r ? { status: 'degraded', error: r.degraded } : { status: 'up' };
      } catch (err) {
        detail[name] = { status: 'down', error: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  const down = Object.values(detail).some((d) => d.status === 'down');
  const degraded = Object.values(detail).some((d) => d.status === 'degraded');
  return {
    ready: !down,
    body: { status: down ? 'down' : degraded ? 'degraded' : 'up', dependencies: detail },
  };
}

/** Accepts the caller's X-Request-Id (when well-formed) or makes one; echoes it and keeps it in res.locals. */
export function requestIdMiddleware(): RequestHandler {
  return (req, res, next) => {
    const given = req.header(REQUEST_ID_HEADER);
    const id = given && REQUEST_ID_RE.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    // Whatever runs for this request (timers and stream handlers included) knows its id.
    requestContext.run({ requestId: id }, next);
  };
}

/**
 * The express app every service starts from: request ids, /healthz, /readyz, identity verification,
 * strict JSON parsing, then the service's routes, then a JSON 404 and the error envelope.
 */
export function createServiceApp(opts: ServiceAppOptions, mount: (app: Express) => void): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.set('query parser', 'simple');

  app.use(requestIdMiddleware());
  app.use(httpMetricsMiddleware());
  app.use(requestShapeGuard());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'up', service: opts.name });
  });
  app.get('/readyz', (_req, res, next) => {
    runReadiness(opts.readiness ?? {})
      .then(({ ready, body }) => res.status(ready ? 200 : 503).json({ service: opts.name, ...body }))
      .catch(next);
  });

  const audiences = typeof opts.audience === 'string' ? [opts.audience] : (opts.audience ?? [opts.name]);
  app.use(
    identityGuard({
      verifier: opts.identity,
      audiences,
      routes: opts.routes ?? identityRoutesOf(audiences),
      publicPaths: opts.publicPaths ?? [],
    }),
  );

  app.use(express.json({ limit: opts.jsonLimit ?? '1mb', strict: true }));
  mount(app);
  app.use((req, _res, next) => next(new ApiError('OP-NOT-FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler(opts.logger));
  return app;
}
