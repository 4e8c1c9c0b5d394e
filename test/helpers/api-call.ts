import { assertMatchesOpenApi } from './openapi';
import type { ApiResponse } from './stack';

export interface ApiInit {
  key?: string;
  headers?: Record<string, string>;
  body?: RequestInit['body'];
}

/**
 * fetch(), whose failure to get an answer (a refused, closed or reset connection) names the call it was: undici's
 * own error is a bare "fetch failed" with the socket's error as its cause, and no frame of the test.
 */
export async function fetchNamed(call: string, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = cause ? ` (${String(cause.code ?? cause.message)})` : '';
    throw new Error(`${call}: ${err instanceof Error ? err.message : String(err)}${why}`, { cause: err });
  }
}

/**
 * One call of the public API at `base` with the key of `init`, its answer checked against docs/openapi.yaml
 * (assertMatchesOpenApi). `headers` are sent beneath the call's own (the distributed stack's `connection: close`).
 */
export async function callApi(
  base: string,
  method: string,
  urlPath: string,
  init: ApiInit = {},
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const sent: Record<string, string> = { ...headers, ...init.headers };
  if (init.key) sent.authorization = `Bearer ${init.key}`;
  const res = await fetchNamed(`${method} ${urlPath}`, `${base}${urlPath}`, {
    method,
    headers: sent,
    body: init.body,
  });
  const text = await res.text();
  const body: unknown = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  assertMatchesOpenApi(method, urlPath, res.status, res.headers.get('content-type') ?? undefined, body);
  return { status: res.status, headers: res.headers, body };
}
