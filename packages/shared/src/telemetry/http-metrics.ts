import { context } from '@opentelemetry/api';
import { RPCType, getRPCMetadata } from '@opentelemetry/core';
import type { RequestHandler, Response } from 'express';
import { metrics } from './metrics';

/**
 * Names the request's route template (`/v1/vision/tasks/{task_id}`) where express has no route of its
 * own (the gateway's proxy): the server span is then named `METHOD <route>` and the duration metric
 * labelled with it. Express routes are picked up without this.
 */
export function setHttpRoute(res: Response, route: string): void {
  res.locals.httpRoute = route;
}

/** Records vision_http_server_request_duration_seconds for every request the app answers. */
export function httpMetricsMiddleware(): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    // The HTTP instrumentation names the server span from this when the response closes; express
    // overwrites it at every layer, so a route named with setHttpRoute is put back once the response
    // is finished ('finish' comes before 'close').
    const rpc = getRPCMetadata(context.active());
    let done = false;
    const record = () => {
      if (done) return;
      done = true;
      const named = res.locals.httpRoute as string | undefined;
      if (named && rpc?.type === RPCType.HTTP) rpc.route = named;
      const route =
        (res.locals.httpRoute as string | undefined) ??
        (req.route ? `${req.baseUrl}${String((req.route as { path: unknown }).path)}` : 'unmatched');
      metrics.httpDuration.observe(
        { method: req.method, route, status_code: String(res.statusCode) },
        Number(process.hrtime.bigint() - start) / 1e9,
      );
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}
