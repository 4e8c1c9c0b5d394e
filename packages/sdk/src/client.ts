import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import { errorFromResponse, parseJson } from './errors';
import { created, type CreateOptions, type CreatedTask, type UploadOptions } from './create';
import { expectContinueFetch } from './expect-continue';
import { multipartBody, type FormField, type UploadSource } from './multipart';
import { sendWithRetries, type FetchLike, type RetryOptions } from './retry';
import { iterateResultPages, type ResultsOptions } from './results';
import { eventStreamOpener, followFrames, type FollowOptions } from './stream';
import { waitForTask, type WaitOptions } from './wait';
import { PlacesApi, type RuleSetInput, type ZoneInput } from './places';
import { WebhooksApi } from './webhooks';
import type {
  Frame,
  ImageDetection,
  Quota,
  ResultPage,
  Scene,
  SceneCode,
  Task,
  TaskPage,
  TaskStatus,
  components,
  paths,
} from './types';

export const SDK_VERSION = '0.1.0';

export interface VisionClientOptions {
  /** Where the service answers, e.g. `https://vision.example.com` (no trailing path). */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Retry policy of every call (network errors, time-outs, 5xx, 429 after Retry-After). */
  retry?: RetryOptions;
  /** Time limit of one attempt of a JSON call in ms (default 30,000). Uploads have none. */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (a proxy agent, a test double); else uploads send `Expect`. */
  fetch?: FetchLike;
  /** Extra headers sent with every request (e.g. `X-Request-Id`). */
  headers?: Record<string, string>;
}

export interface ListTasksOptions {
  status?: TaskStatus;
  kind?: 'video' | 'image';
  /** Tasks per page, 1..100. */
  limit?: number;
  cursor?: string;
}

/** A typed client of the Vision Recognition Service (see packages/sdk/README.md). */
export class VisionClient {
  private readonly api;
  private readonly fetchImpl: FetchLike;
  private readonly uploadFetch: FetchLike;
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  /** Webhook endpoints of this key's subject and their delivery logs. */
  readonly webhooks: WebhooksApi;
  /** Zones and lines of video tasks: rules, analytics, events and replay (docs/ANALYTICS.md). */
  readonly places: PlacesApi;

  constructor(private readonly options: VisionClientOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((req) => fetch(req));
    this.uploadFetch = options.fetch ?? expectContinueFetch;
    this.headers = {
      'user-agent': `vision-sdk/${SDK_VERSION}`,
      ...options.headers,
      authorization: `Bearer ${options.apiKey}`,
    };
    const timeoutMs = options.timeoutMs ?? 30_000;
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: this.headers,
      fetch: (req) =>
        sendWithRetries(this.fetchImpl, (signal) => new Request(req.clone(), { signal }), this.retry, {
          timeoutMs,
          signal: req.signal,
        }),
    });
    this.webhooks = new WebhooksApi(this.api, (call) => this.unwrap(call));
    this.places = new PlacesApi(
      this.api,
      (call) => this.unwrap(call),
      (path) => eventStreamOpener(this.fetchImpl, `${this.baseUrl}${path}`, this.headers),
      failure,
    );
  }

  private get retry(): RetryOptions {
    return this.options.retry ?? {};
  }

  /** Unwraps an openapi-fetch answer: the body, or the typed error. */
  private async unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (!response.ok || data === undefined) throw errorFromResponse(response.status, response.headers, error);
    return data;
  }

  /** Every scene; the enabled ones are valid scene codes. */
  async scenes(): Promise<Scene[]> {
    return (await this.unwrap(this.api.GET('/api/op/v1/scenes'))).scenes;
  }

  /** Today's quota of this key's subject. */
  async quota(): Promise<Quota> {
    return this.unwrap(this.api.GET('/v1/vision/quota'));
  }

  async getTask(taskId: string): Promise<Task> {
    return this.unwrap(this.api.GET('/v1/vision/tasks/{task_id}', { params: { path: { task_id: taskId } } }));
  }

  /** Stops a running task; the task as the service reports it after its bounded wait (stopping or stopped). */
  async stopTask(taskId: string): Promise<Task> {
    return this.unwrap(
      this.api.POST('/v1/vision/tasks/{task_id}/stop', { params: { path: { task_id: taskId } } }),
    );
  }

  /** One page of this key's tasks, newest first. */
  async listTasks(opts: ListTasksOptions = {}): Promise<TaskPage> {
    return this.unwrap(this.api.GET('/v1/vision/tasks', { params: { query: clean(opts) } }));
  }

  /** Every task of this key (all pages), newest first. */
  async *tasks(opts: Omit<ListTasksOptions, 'cursor'> = {}): AsyncGenerator<Task> {
    let cursor: string | undefined;
    do {
      const page = await this.listTasks({ ...opts, cursor });
      yield* page.items;
      cursor = page.next_cursor || undefined;
    } while (cursor);
  }

  /** Creates a task on a live stream (http, https, rtsp or rtmp URL), with its zones and lines if any. */
  async createStreamTask(
    input: { streamUrl: string; scene: SceneCode } & RuleSetInput,
    opts: CreateOptions = {},
  ): Promise<CreatedTask> {
    const key = opts.idempotencyKey ?? randomUUID();
    const { zones, lines } = input;
    const rules = {
      ...(zones ? { zones } : {}),
      ...(lines ? { lines } : {}),
    } as components['schemas']['RuleSet'];
    const { data, error, response } = await this.api.POST('/v1/vision/tasks', {
      params: { header: { 'Idempotency-Key': key } },
      body: { scene_code: input.scene, stream_url: input.streamUrl, ...rules },
      signal: opts.signal,
    });
    if (!response.ok || !data) throw errorFromResponse(response.status, response.headers, error);
    return created(response.status, data, key);
  }

  /** Creates a task on a video file (MP4 or MOV: a path, the bytes, or a stream), reporting upload progress. */
  async createFileTask(
    input: { file: UploadSource; scene?: SceneCode } & RuleSetInput,
    opts: UploadOptions = {},
  ): Promise<CreatedTask> {
    const key = opts.idempotencyKey ?? randomUUID();
    const fields: FormField[] = [];
    if (input.scene) fields.push({ name: 'scene_code', value: input.scene });
    // The rules go before the file, as JSON text fields.
    if (input.zones) fields.push({ name: 'zones', value: JSON.stringify(input.zones) });
    if (input.lines) fields.push({ name: 'lines', value: JSON.stringify(input.lines) });
    fields.push({ name: 'file', file: input.file });
    const res = await this.upload('/v1/vision/video-tasks', fields, key, opts);
    return created(res.status, (await res.json()) as Task, key);
  }

  /**
   * Detects objects in 1..10 images (paths, Buffers or streams; JPG, PNG or WEBP), synchronously.
   * One result per image, in order; a failed image carries `error_code` and costs nothing. With `zones`, each
   * succeeded image also carries its counts per zone.
   */
  async detectImages(
    images: UploadSource[],
    opts: UploadOptions & { scene?: SceneCode; zones?: ZoneInput[] } = {},
  ): Promise<ImageDetection> {
    if (images.length < 1 || images.length > 10)
      throw new RangeError(`detectImages takes 1 to 10 images, got ${images.length}`);
    const key = opts.idempotencyKey ?? randomUUID();
    const fields: FormField[] = images.map((file) => ({ name: 'files', file }));
    if (opts.zones) fields.unshift({ name: 'zones', value: JSON.stringify(opts.zones) });
    if (opts.scene) fields.unshift({ name: 'scene_code', value: opts.scene });
    const res = await this.upload('/v1/vision/image-detections', fields, key, opts);
    return (await res.json()) as ImageDetection;
  }

  /** Sends a multipart create with its key on every attempt; throws the typed error of a non-2xx answer. */
  private async upload(
    route: string,
    fields: FormField[],
    key: string,
    opts: UploadOptions,
  ): Promise<Response> {
    const body = await multipartBody(fields);
    const url = `${this.baseUrl}${route}`;
    const res = await sendWithRetries(
      this.uploadFetch,
      (signal) =>
        new Request(url, {
          method: 'POST',
          headers: {
            ...this.headers,
            'idempotency-key': key,
            'content-type': body.contentType,
            ...(body.length !== undefined ? { 'content-length': String(body.length) } : {}),
          },
          body: body.stream(opts.onUploadProgress),
          signal,
          duplex: 'half',
        } as RequestInit),
      this.retry,
      { signal: opts.signal, replayable: body.replayable },
    );
    if (!res.ok) {
      const text = await res.text();
      throw errorFromResponse(res.status, res.headers, parseJson(text));
    }
    return res;
  }

  /**
   * Polls a task with backoff until it reaches a terminal status (or `until` says so), or throws
   * VisionTimeoutError. `resolving` is polled like any other status: the create is never resent.
   */
  waitForTask(taskId: string, opts: WaitOptions = {}): Promise<Task> {
    return waitForTask((id) => this.getTask(id), taskId, opts);
  }

  /** One page of result frames. */
  async resultPage(
    taskId: string,
    opts: { cursor?: string; limit?: number; minScore?: number } = {},
  ): Promise<ResultPage> {
    const query = clean({ cursor: opts.cursor, limit: opts.limit, min_score: opts.minScore });
    return this.unwrap(
      this.api.GET('/v1/vision/tasks/{task_id}/results', { params: { path: { task_id: taskId }, query } }),
    );
  }

  /** Every page of result frames, following the cursor (see ResultsOptions for running tasks). */
  resultPages(taskId: string, opts: ResultsOptions = {}): AsyncGenerator<ResultPage> {
    const { limit = 500, minScore } = opts;
    return iterateResultPages((cursor) => this.resultPage(taskId, { cursor, limit, minScore }), opts);
  }

  /** Every result frame of a task, each once, in order. */
  async *results(taskId: string, opts: ResultsOptions = {}): AsyncGenerator<Frame> {
    for await (const page of this.resultPages(taskId, opts)) yield* page.items;
  }

  /**
   * Every result frame pushed over the live stream (Server-Sent Events), each once, in order, until the
   * task ends; reconnects with `Last-Event-ID` when the connection drops.
   */
  followResults(taskId: string, opts: FollowOptions = {}): AsyncGenerator<Frame> {
    const qs = opts.minScore !== undefined ? `?min_score=${encodeURIComponent(String(opts.minScore))}` : '';
    const url = `${this.baseUrl}/v1/vision/tasks/${encodeURIComponent(taskId)}/results/stream${qs}`;
    return followFrames(eventStreamOpener(this.fetchImpl, url, this.headers), failure, opts);
  }
}

/** The typed error of a stream's non-2xx answer. */
async function failure(res: Response): Promise<Error> {
  return errorFromResponse(res.status, res.headers, parseJson(await res.text()));
}

function clean<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
