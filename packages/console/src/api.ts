/**
 * Calls to the service's public API on this origin. The API key lives in sessionStorage (this tab
 * only) and is sent as `Authorization: Bearer` and nowhere else.
 */
const KEY_ITEM = 'vision.console.api-key';

export const getKey = (): string => sessionStorage.getItem(KEY_ITEM) ?? '';
export const setKey = (key: string): void => sessionStorage.setItem(KEY_ITEM, key.trim());
export const forgetKey = (): void => sessionStorage.removeItem(KEY_ITEM);

/** An API error as the service answered it: its code and message (or the HTTP status when not JSON). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    /** The error's `details` (a picture's 404 names why in `snapshot_reason`). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

interface Envelope {
  error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown };
}

function failureOf(status: number, text: string): ApiFailure {
  try {
    const e = (JSON.parse(text) as Envelope).error;
    if (e && typeof e.code === 'string')
      return new ApiFailure(
        status,
        e.code,
        typeof e.message === 'string' ? e.message : e.code,
        typeof e.request_id === 'string' ? e.request_id : undefined,
        typeof e.details === 'object' && e.details !== null
          ? (e.details as Record<string, unknown>)
          : undefined,
      );
  } catch {
    // not JSON: fall through
  }
  return new ApiFailure(status, `HTTP-${status}`, text.slice(0, 200) || 'The service did not answer');
}

/** An Idempotency-Key (UUID v4); crypto.randomUUID needs a secure context, getRandomValues does not. */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function' && isSecureContext) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export async function api<T>(
  method: string,
  path: string,
  init: { json?: unknown; form?: FormData; idempotent?: boolean } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { authorization: `Bearer ${getKey()}` };
  if (init.idempotent) headers['idempotency-key'] = newIdempotencyKey();
  let body: BodyInit | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form) body = init.form;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, 'NETWORK', 'The service could not be reached');
  }
  const text = await res.text();
  if (!res.ok) throw failureOf(res.status, text);
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
}

/** A binary answer: its body and headers. */
export interface BlobAnswer {
  blob: Blob;
  headers: Headers;
}

/**
 * A binary GET (a picture) with the key in the header: the body as a Blob, with the answer's headers. Rejects with
 * an ApiFailure carrying the service's code (a 404 for an event or track without a picture names why).
 */
export async function apiBlob(path: string, signal?: AbortSignal): Promise<BlobAnswer> {
  let res: Response;
  try {
    res = await fetch(path, {
      headers: { authorization: `Bearer ${getKey()}` },
      signal,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiFailure(0, 'NETWORK', 'The service could not be reached');
  }
  if (!res.ok) throw failureOf(res.status, await res.text());
  return { blob: await res.blob(), headers: res.headers };
}

/**
 * Opens a Server-Sent Events stream (GET, the key in the header, resuming after `lastEventId`). Resolves
 * with the open response; rejects with an ApiFailure for an error answer or no connection.
 */
export async function openEventStream(
  path: string,
  lastEventId: string | undefined,
  signal: AbortSignal,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${getKey()}`,
    accept: 'text/event-stream',
  };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  let res: Response;
  try {
    res = await fetch(path, { headers, signal, credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new ApiFailure(0, 'NETWORK', 'The service could not be reached');
  }
  if (!res.ok) throw failureOf(res.status, await res.text());
  if (!res.body) throw new ApiFailure(0, 'NETWORK', 'The service sent no stream');
  return res as Response & { body: ReadableStream<Uint8Array> };
}

/**
 * A multipart POST with upload progress (fetch reports none): `onProgress(sent, total)` while the body
 * goes out. Resolves with the JSON answer; rejects with an ApiFailure.
 */
export function uploadWithProgress<T>(
  path: string,
  form: FormData,
  onProgress: (sent: number, total: number) => void,
): Promise<ApiAnswer<T>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('authorization', `Bearer ${getKey()}`);
    xhr.setRequestHeader('idempotency-key', newIdempotencyKey());
    xhr.upload.addEventListener('progress', (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0));
    xhr.addEventListener('error', () => reject(new ApiFailure(0, 'NETWORK', 'The upload was interrupted')));
    xhr.addEventListener('load', () => {
      const text = xhr.responseText;
      if (xhr.status < 200 || xhr.status >= 300) return reject(failureOf(xhr.status, text));
      const headers = new Headers();
      for (const line of xhr
        .getAllResponseHeaders()
        .trim()
        .split(/[\r\n]+/)) {
        const i = line.indexOf(':');
        if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      }
      resolve({ status: xhr.status, headers, body: JSON.parse(text) as T });
    });
    xhr.send(form);
  });
}

// ---- the public API's shapes (docs/openapi.yaml) -------------------------------------------------

export interface Scene {
  scene_code: string;
  name: string;
  enabled: boolean;
  reason?: string;
  engine: string;
  labels: string[];
  lower_bound: number;
  default_business_threshold: number;
}

export interface QuotaKind {
  limit: number;
  used: number;
  held?: number;
  remaining: number;
  resets_at: string;
}

export interface Task {
  task_id: string;
  request_id: string;
  scene_code: string;
  status: string;
  kind?: string;
  reason?: string;
  created_at: string;
  updated_at: string;
  result_expires_at: string;
}

export interface DetectedObject {
  label: string;
  score: number;
  bbox: { format: string; cx: number; cy: number; width: number; height: number };
  track_id?: string;
  /** Where the track's best shot is read (`GET .../tracks/{track_id}/best_shot`). */
  best_shot_path?: string;
}

export interface Frame {
  frame_id: string;
  frame_time_ms: number;
  image: { width: number; height: number };
  objects: DetectedObject[];
  objects_total?: number;
}

export interface ImageResult {
  seq: number;
  status: 'succeeded' | 'failed';
  objects?: DetectedObject[];
  error_code?: string;
}

export const TERMINAL = new Set(['stopped', 'succeeded', 'failed', 'refunded']);
export const STOPPABLE = new Set(['submitting', 'resolving', 'running', 'stopping']);

export const enabledScenes = async (): Promise<Scene[]> =>
  (await api<{ scenes: Scene[] }>('GET', '/api/op/v1/scenes')).body.scenes.filter((s) => s.enabled);
