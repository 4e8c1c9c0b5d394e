import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import {
  ApiError,
  DEADLINE_HEADER,
  IDENTITY_HEADER,
  REQUEST_TIMEOUT_HEADER,
  deadlineFromTimeout,
  REQUEST_ID_HEADER,
  errorHandler,
  httpMetricsMiddleware,
  metrics,
  setHttpRoute,
  signIdentity,
  type Limiter,
  type Logger,
  type ReadinessCheck,
  runReadiness,
  requestIdMiddleware,
  requestShapeGuard,
  type IdentitySigner,
  setEarlyAnswerLimits,
} from '@vision/shared';
import { allowHeader, allows, matchRoute, routeTemplate, type Method, type Upstream } from '../domain/routes';
import { limitsFor, type LimitOverrides, type SubjectLimits } from '../domain/limits';
import { parseBearer } from '../domain/key-format';
import type { KeyLookup } from '../store/key-store';
import { admit } from '../use-cases/admit';
import type { Door } from '../use-cases/door';
import { AuthCache } from '../use-cases/authenticate';
import type { Forwarder } from './proxy';
import { mountConsole } from './console';

export interface GatewayDeps {
  logger: Logger;
  keys: KeyLookup;
  /** How long a successful key lookup is reused (0: look up every request); revocation lag at most this. */
  authCacheMs?: number;
  limiter: Limiter;
  /** Signs the caller's identity for the upstream (the gateway's private key). */
  signer: IdentitySigner;
  upstreams: Record<Upstream, string>;
  limits: SubjectLimits;
  limitOverrides: LimitOverrides;
  /** Streams each routed request to its upstream (see createForwarder). */
  forward: Forwarder;
  /** Admits or refuses the calls that need inference on their head, before they are forwarded. */
  door: Door;
  openapi: Record<string, unknown>;
  readiness: Record<string, ReadinessCheck>;
  /** The web console's build output, served at /console/ (see resolveConsoleDir). */
  consoleDir?: string;
}

const unauthorized = () =>
  new ApiError('OP-AUTH-REQUIRED', 'A valid API key is required: Authorization: Bearer <API_KEY>');

/** A method the path does not have: OPTIONS answers 204, anything else 405; both name the methods in `Allow`. */
function refuseMethod(req: Request, res: Response, next: NextFunction, methods: readonly Method[]): void {
  res.setHeader('Allow', allowHeader(methods));
  if (req.method === 'OPTIONS') return void res.status(204).end();
  next(
    new ApiError('OP-METHOD-NOT-ALLOWED', `${req.method} is not a method of ${req.path}`, {
      reason: 'method_not_allowed',
      allow: methods,
    }),
  );
}

/**
 * The public front door: request ids, authentication by API key, per-subject QPS and concurrency
 * limits, and streaming reverse proxying to the service that owns each path.
 */
export function createApp(deps: GatewayDeps): Express {
  const { logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  const { forward } = deps;
  const auth = new AuthCache(
    (key) => deps.keys.authenticate(key),
    deps.authCacheMs ?? 0,
    undefined,
    undefined,
    () => deps.keys.revocations,
  );

  app.use(requestIdMiddleware());
  app.use(httpMetricsMiddleware());
  app.use(requestShapeGuard());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'up', service: 'gateway' });
  });
  // Public: up or down, nothing more. A dependency's error can name internal hosts and users; the
  // full report is on the internal metrics port (GET /readyz there).
  app.get('/readyz', (_req, res, next) => {
    runReadiness(deps.readiness)
      .then(({ ready }) => res.status(ready ? 200 : 503).json({ status: ready ? 'up' : 'down' }))
      .catch(next);
  });

  mountConsole(app, deps.consoleDir);

  // The API's own description is public documentation: no key needed.
  app.all('/openapi.json', (req, res, next) => {
    if (!allows(['GET'], req.method)) return refuseMethod(req, res, next, ['GET']);
    res.json(deps.openapi);
  });

  // Authentication: every other route, known or not.
  app.use((req: Request, res: Response, next: NextFunction) => {
    setHttpRoute(res, routeTemplate(req.path));
    const header = req.header('authorization');
    const key = parseBearer(header);
    if (!key) {
      metrics.authFailures.inc({ reason: header === undefined ? 'missing' : 'malformed' });
      return next(unauthorized());
    }
    auth
      .authenticate(key)
      .then((subject) => {
        if (!subject) {
          metrics.authFailures.inc({ reason: 'unknown_key' });
          return next(unauthorized());
        }
        res.locals.subject = subject;
        next();
      })
      .catch(next);
  });

  // Per-subject limits (shared by all keys of a subject).
  app.use((req: Request, res: Response, next: NextFunction) => {
    const subject = res.locals.subject as string;
    const limits = limitsFor(subject, deps.limits, deps.limitOverrides);
    admit(deps.limiter, subject, limits, logger).then((done) => {
      res.once('finish', done);
      res.once('close', done);
      next();
    }, next);
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    const route = matchRoute(req.path);
    if (!route) return next(new ApiError('OP-NOT-FOUND', `No route for ${req.method} ${req.path}`));
    if (!allows(route.methods, req.method)) return refuseMethod(req, res, next, route.methods);
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > route.maxBodyBytes) {
      // Refused at the edge: the upstream is never contacted. Drain what the client sends.
      req.resume();
      return next(
        new ApiError('OP-TASK-REQUEST-INVALID', `Request body exceeds ${route.maxBodyBytes} bytes`, {
          reason: 'body_too_large',
          limit_bytes: route.maxBodyBytes,
        }),
      );
    }
    // The caller's X-Request-Timeout-Ms becomes the deadline every service on the way honours.
    delete req.headers[DEADLINE_HEADER];
    let deadline: number | undefined;
    try {
      deadline = deadlineFromTimeout(req.headers[REQUEST_TIMEOUT_HEADER], Date.now());
    } catch (err) {
      return next(err);
    }
    if (deadline !== undefined) req.headers[DEADLINE_HEADER] = String(deadline);
    delete req.headers[IDENTITY_HEADER];
    delete req.headers.authorization;
    /** Signs the caller's identity for the upstream and forwards: only a call that goes on is signed. */
    const send = () => {
      const requestId = res.locals.requestId as string;
      req.headers[IDENTITY_HEADER] = signIdentity(
        deps.signer,
        { subject: res.locals.subject as string, requestId },
        route.upstream,
        // Bound to the request forwarded: its method and target (forward() sends req.url as it is).
        { method: req.method, target: req.url },
      );
      req.headers[REQUEST_ID_HEADER] = requestId;
      forward(req, res, { name: route.upstream, url: deps.upstreams[route.upstream] }, route.maxBodyBytes);
    };
    if (!route.door || req.method !== 'POST') return send();
    // At the door: admitted or refused on the head alone, nothing forwarded yet. A refused body is read
    // and thrown away here, up to the endpoint's limit (early-answer.ts); an Expect client sends none.
    setEarlyAnswerLimits(req, { bound: route.maxBodyBytes });
    const gone = new AbortController();
    // Only a caller that leaves before its answer ends a wait (an answered call has none left).
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    deps.door
      .enter(route.upstream, res.locals.subject as string, { deadline, signal: gone.signal })
      .then((turn) => {
        if (turn) {
          res.once('finish', () => turn.release());
          res.once('close', () => turn.release());
        }
        if (res.destroyed) return turn?.release();
        send();
      }, next);
  });

  app.use(errorHandler(logger));
  return app;
}
