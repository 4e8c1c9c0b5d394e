import type { Frame } from './types';

/** One parsed Server-Sent Event (WHATWG framing; comments such as heartbeats are skipped). */
export interface ServerEvent {
  event: string;
  data: string;
  id?: string;
}

/** Splits a text/event-stream body into events as they arrive. */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buf = '';
  /** A chunk's last CR: the first half of a CRLF cut in two, or a line end of its own. */
  let cr = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // A CR held back from the last chunk ends its line: the body ended right after it.
      if (done && !cr) return;
      let text = cr + (done ? '' : decoder.decode(value, { stream: true }));
      cr = !done && text.endsWith('\r') ? '\r' : '';
      if (cr) text = text.slice(0, -1);
      buf += text.replace(/\r\n?/g, '\n');
      let at: number;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const ev: ServerEvent = { event: 'message', data: '' };
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') ev.event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'id' && !value.includes('\0')) ev.id = value;
        }
        if (data.length === 0) continue;
        ev.data = data.join('\n');
        yield ev;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export interface FollowOptions {
  minScore?: number;
  /** Resume after this event id (a cursor of the page endpoint). */
  lastEventId?: string;
  /** Wait before reconnecting after a dropped stream or a 429/503, in ms (default 1,000). */
  reconnectDelayMs?: number;
  signal?: AbortSignal;
}

/** Opens the stream from an event id; resolves with the response (the caller throws for non-2xx). */
export type OpenStream = (lastEventId: string | undefined, signal?: AbortSignal) => Promise<Response>;

const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * Every frame of a task as the server pushes it, each once and in order: a dropped connection or a
 * stream closed before `end` is reopened with `Last-Event-ID`, which resumes after the last frame.
 */
export function followFrames(
  open: OpenStream,
  fail: (res: Response) => Promise<Error>,
  opts: FollowOptions = {},
): AsyncGenerator<Frame> {
  return followServerEvents<Frame>(open, fail, 'frame', opts);
}

/**
 * The JSON data of every `name` event of a stream that ends with an `end` event, each once and in order:
 * a dropped connection, a stream closed before `end` or a 429/5xx answer is reopened with `Last-Event-ID`
 * (the id of the last event received), which resumes after it.
 */
export async function* followServerEvents<T>(
  open: OpenStream,
  fail: (res: Response) => Promise<Error>,
  name: string,
  opts: Omit<FollowOptions, 'minScore'> = {},
): AsyncGenerator<T> {
  let lastEventId = opts.lastEventId;
  const delay = opts.reconnectDelayMs ?? 1000;
  for (;;) {
    opts.signal?.throwIfAborted();
    let res: Response | undefined;
    try {
      res = await open(lastEventId, opts.signal);
    } catch (err) {
      if (opts.signal?.aborted) throw err;
    }
    if (res && !res.ok && !RETRYABLE.has(res.status)) throw await fail(res);
    if (res?.ok && res.body) {
      try {
        for await (const ev of parseEventStream(res.body)) {
          if (ev.event === 'end') return;
          if (ev.event !== name) continue;
          const data = JSON.parse(ev.data) as T;
          if (ev.id !== undefined) lastEventId = ev.id;
          yield data;
        }
      } catch (err) {
        if (opts.signal?.aborted) throw err;
      }
    } else if (res?.body) {
      await res.body.cancel().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Opens `url` as an event stream with these headers, from an event id. */
export function eventStreamOpener(
  fetchImpl: (req: Request) => Promise<Response>,
  url: string,
  headers: Record<string, string>,
): OpenStream {
  return (lastEventId, signal) =>
    fetchImpl(
      new Request(url, {
        headers: {
          ...headers,
          accept: 'text/event-stream',
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        },
        signal,
      }),
    );
}
