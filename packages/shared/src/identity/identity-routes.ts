/**
 * Which issuer's identity opens which route. One table for every service: the identity guard of each
 * service refuses a route's call signed by an issuer the route does not list (http.ts), each issuer's key
 * is handed to the services it calls on some route and to no other (IDENTITY_CALLS, the key directories,
 * the Helm chart), and a test walks every route with every issuer. A route that is not listed here is
 * answered 404 whoever signs for it. Routes outside identity (the operator endpoints of tasks) are the
 * service's publicPaths.
 */

/** The services whose routes take an identity header. */
export type IdentityAudience = 'tasks' | 'quota' | 'results' | 'images' | 'inference';

/** The services that sign identity headers (each holds a private key). */
export type IdentityIssuer = 'gateway' | 'tasks' | 'images' | 'results';

export type IdentityMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface IdentityRoute {
  service: IdentityAudience;
  method: IdentityMethod;
  /** The path as the service registers it (express syntax, `:name` for one segment). */
  path: string;
  /** The issuers whose identity opens it. */
  issuers: readonly IdentityIssuer[];
}

const route = (
  service: IdentityAudience,
  method: IdentityMethod,
  path: string,
  ...issuers: IdentityIssuer[]
): IdentityRoute => ({ service, method, path, issuers });

const WEBHOOKS = '/v1/vision/webhooks';

/** Every route of every service that takes an identity, with the issuers that may call it. */
export const IDENTITY_ROUTES: readonly IdentityRoute[] = [
  // tasks: the public API through the gateway; results reads a task's settings for its caller.
  route('tasks', 'GET', '/api/op/v1/scenes', 'gateway'),
  route('tasks', 'GET', '/v1/vision/tasks', 'gateway'),
  route('tasks', 'POST', '/v1/vision/tasks', 'gateway'),
  route('tasks', 'GET', '/v1/vision/tasks/:task_id', 'gateway'),
  route('tasks', 'POST', '/v1/vision/tasks/:task_id/stop', 'gateway'),
  route('tasks', 'GET', '/v1/vision/tasks/:task_id/video', 'gateway'),
  route('tasks', 'GET', '/v1/vision/tasks/:task_id/snapshot', 'gateway'),
  route('tasks', 'POST', '/v1/vision/video-tasks', 'gateway'),
  route('tasks', 'GET', '/v1/vision/tasks/:task_id/rules', 'gateway'),
  route('tasks', 'PUT', '/v1/vision/tasks/:task_id/rules', 'gateway'),
  route('tasks', 'GET', '/internal/v1/tasks/:task_id', 'results'),
  // quota: the caller's remaining quota; video charges by tasks; image holds and leases by images.
  route('quota', 'GET', '/v1/vision/quota', 'gateway'),
  route('quota', 'POST', '/internal/v1/charges', 'tasks'),
  route('quota', 'POST', '/internal/v1/charges/:charge_id/refund', 'tasks'),
  route('quota', 'POST', '/internal/v1/holds', 'images'),
  route('quota', 'POST', '/internal/v1/holds/:hold_id/settle', 'images'),
  route('quota', 'PUT', '/internal/v1/leases/:lease_id', 'images'),
  route('quota', 'POST', '/internal/v1/leases/:lease_id/spends', 'images'),
  route('quota', 'POST', '/internal/v1/leases/:lease_id/close', 'images'),
  // results: the public API through the gateway.
  route('results', 'GET', '/v1/vision/tasks/:task_id/results', 'gateway'),
  route('results', 'GET', '/v1/vision/tasks/:task_id/results/stream', 'gateway'),
  route('results', 'GET', '/v1/vision/tasks/:task_id/analytics', 'gateway'),
  route('results', 'POST', '/v1/vision/tasks/:task_id/analytics/replay', 'gateway'),
  route('results', 'GET', '/v1/vision/tasks/:task_id/events', 'gateway'),
  route('results', 'GET', '/v1/vision/tasks/:task_id/events/stream', 'gateway'),
  route('results', 'GET', '/v1/vision/tasks/:task_id/events/:event_id/snapshot', 'gateway'),
  route('results', 'GET', '/v1/vision/tasks/:task_id/tracks/:track_id/best_shot', 'gateway'),
  route('results', 'POST', WEBHOOKS, 'gateway'),
  route('results', 'GET', WEBHOOKS, 'gateway'),
  route('results', 'GET', `${WEBHOOKS}/:endpoint_id`, 'gateway'),
  route('results', 'DELETE', `${WEBHOOKS}/:endpoint_id`, 'gateway'),
  route('results', 'POST', `${WEBHOOKS}/:endpoint_id/rotate-secret`, 'gateway'),
  route('results', 'POST', `${WEBHOOKS}/:endpoint_id/revoke-previous-secret`, 'gateway'),
  route('results', 'GET', `${WEBHOOKS}/:endpoint_id/deliveries`, 'gateway'),
  route('results', 'GET', `${WEBHOOKS}/:endpoint_id/deliveries/:delivery_id`, 'gateway'),
  route('results', 'POST', `${WEBHOOKS}/:endpoint_id/deliveries/:delivery_id/redeliver`, 'gateway'),
  // images: image calls through the gateway; tasks reads a call's record for its caller.
  route('images', 'POST', '/v1/vision/image-detections', 'gateway'),
  route('images', 'GET', '/internal/v1/calls/:task_id', 'tasks'),
  // inference: jobs are tasks'; image detection is images'; both read the scene list.
  route('inference', 'POST', '/internal/v1/jobs', 'tasks'),
  route('inference', 'GET', '/internal/v1/jobs', 'tasks'),
  route('inference', 'GET', '/internal/v1/jobs/:job_id', 'tasks'),
  route('inference', 'POST', '/internal/v1/jobs/:job_id/stop', 'tasks'),
  route('inference', 'GET', '/internal/v1/jobs/:job_id/still', 'tasks'),
  route('inference', 'GET', '/internal/v1/capacity', 'tasks'),
  route('inference', 'POST', '/internal/v1/jobs/:job_id/ring', 'results'),
  route('inference', 'POST', '/internal/v1/jobs/:job_id/pictures', 'results'),
  route('inference', 'POST', '/internal/v1/detect', 'images'),
  route('inference', 'GET', '/internal/v1/scenes', 'tasks', 'images'),
];

const patternCache = new WeakMap<IdentityRoute, RegExp>();

/** The route's path as a pattern over a request path (a trailing slash allowed, as express routes it). */
function patternOf(r: IdentityRoute): RegExp {
  let p = patternCache.get(r);
  if (!p) {
    const escaped = r.path
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    p = new RegExp(`^${escaped}/?$`);
    patternCache.set(r, p);
  }
  return p;
}

/**
 * The route of `service` that a request with `method` (HEAD is served by GET) and `path` (no query)
 * reaches, from `routes`; undefined when none does.
 */
export function findIdentityRoute(
  routes: readonly IdentityRoute[],
  service: string,
  method: string,
  path: string,
): IdentityRoute | undefined {
  const m = method === 'HEAD' ? 'GET' : method;
  return routes.find((r) => r.service === service && r.method === m && patternOf(r).test(path));
}

/** The routes of the services `audiences`. */
export function identityRoutesOf(audiences: readonly string[]): IdentityRoute[] {
  return IDENTITY_ROUTES.filter((r) => audiences.includes(r.service));
}
