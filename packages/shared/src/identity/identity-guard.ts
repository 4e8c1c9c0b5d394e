import type { RequestHandler } from 'express';
import { ApiError } from '../contract/errors';
import { checkIdentity, IDENTITY_HEADER, type IdentityVerifier } from './identity';
import { REASON } from '../contract/reasons';
import { findIdentityRoute, type IdentityRoute } from './identity-routes';

export interface IdentityGuardOptions {
  /** The public keys of the issuers this service accepts. */
  verifier: IdentityVerifier;
  /** The audiences a header may name (the service's name; a stand-in serving several lists them). */
  audiences: readonly string[];
  /** The routes served and the issuers of each (IDENTITY_ROUTES of the audiences). */
  routes: readonly IdentityRoute[];
  /** Path prefixes outside identity (operator endpoints with their own credential). */
  publicPaths: readonly string[];
}

const refused = () => new ApiError('OP-AUTH-REQUIRED', 'Missing or invalid credentials');

/**
 * A call whose identity, valid in every other way, expired while it waited inside the system (a queue, a
 * stalled event loop): the caller's key was accepted, so this is an internal deadline, 503 with Retry-After,
 * never the 401 that tells a client its key is wrong.
 */
const expired = () =>
  new ApiError(
    'OP-SYS-UNAVAILABLE',
    'The request waited too long inside the service; retry',
    { reason: REASON.deadline_exceeded },
    { 'Retry-After': '1' },
  );

/**
 * The identity check of every route of a service (createServiceApp): the header must be valid for this
 * service and for this very request (method and target), and its issuer one that the route table lists
 * for the route the request reaches; otherwise 401, but 503 for a header that only expired. A request that reaches no listed route is 404,
 * whoever signed it: a handler the table does not list never runs. The identity, its issuer included, is
 * kept for the route (identityOf).
 */
export function identityGuard(opts: IdentityGuardOptions): RequestHandler {
  return (req, res, next) => {
    if (opts.publicPaths.some((p) => req.path.startsWith(p))) return next();
    const identity = checkIdentity(opts.verifier, req.header(IDENTITY_HEADER), opts.audiences, {
      method: req.method,
      target: req.originalUrl,
    });
    if (identity === 'expired') return next(expired());
    if (!identity) return next(refused());
    const route = findIdentityRoute(opts.routes, identity.audience, req.method, req.path);
    if (!route) return next(new ApiError('OP-NOT-FOUND', `No route for ${req.method} ${req.path}`));
    if (!(route.issuers as readonly string[]).includes(identity.issuer)) return next(refused());
    res.locals.identity = identity;
    next();
  };
}
