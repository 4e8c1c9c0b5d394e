import net from 'node:net';
import { settledQuota, startStack, type TestStack } from '../helpers/stack';
import { fatalErrors } from './processes';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

/** What came back on a raw connection: the first response, parsed, and how the connection ended. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The bytes after the first response (a second, pipelined answer; an interim 100 comes first). */
  rest: string;
  /** How the server ended the connection: 'end' (FIN), 'reset' (RST), or 'open' when we closed it. */
  ended: 'end' | 'reset' | 'open';
  /** Milliseconds from the first write to the end of the first complete response (-1: none). */
  answeredMs: number;
}

/** Splits one HTTP/1.1 response (Content-Length framed) off the front of `text`; undefined while incomplete. */
export function parseResponse(
  text: string,
): { status: number; headers: Record<string, string>; body: string; rest: string } | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  if (status >= 100 && status < 200) {
    const next = parseResponse(text.slice(headEnd + 4));
    return next && { ...next, headers: { ...next.headers, 'x-interim': String(status) } };
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = text.slice(headEnd + 4);
  if (Buffer.byteLength(body, 'latin1') < length) return undefined;
  return { status, headers, body: body.slice(0, length), rest: body.slice(length) };
}

export interface RawClient {
  socket: net.Socket;
  /** Writes and waits until the kernel took the bytes (or the connection failed). */
  write(bytes: Buffer | string): Promise<boolean>;
  /** Resolves when the first complete response arrived or the connection ended. */
  answer(timeoutMs?: number): Promise<RawAnswer>;
  /** Resolves with the statuses of the first `n` complete responses (pipelined or in turn). */
  statuses(n: number, timeoutMs?: number): Promise<number[]>;
  /** Resolves when the server has closed the connection: `end` (FIN) or `reset` (RST). */
  closed(timeoutMs?: number): Promise<RawAnswer['ended']>;
}

/** A raw TCP client of the gateway: the bytes go out exactly as given. */
export function rawClient(base: string): Promise<RawClient> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let ended: RawAnswer['ended'] = 'open';
    let firstWrite = 0;
    let answeredMs = -1;
    const waiters: Array<() => void> = [];
    const wake = () => waiters.splice(0).forEach((w) => w());
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (answeredMs < 0 && parseResponse(Buffer.concat(chunks).toString('latin1')))
        answeredMs = Date.now() - firstWrite;
      wake();
    });
    socket.on('end', () => {
      ended = 'end';
      wake();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      ended = err.code === 'ECONNRESET' ? 'reset' : 'end';
      wake();
    });
    socket.on('close', wake);
    socket.once('connect', () =>
      resolve({
        socket,
        write(bytes) {
          if (!firstWrite) firstWrite = Date.now();
          return new Promise((done) => {
            if (socket.destroyed || !socket.writable) return done(false);
            socket.write(bytes, (err) => done(!err));
          });
        },
        answer(timeoutMs = 30_000) {
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
            const check = () => {
              const text = Buffer.concat(chunks).toString('latin1');
              const parsed = parseResponse(text);
              if (parsed || ended !== 'open' || socket.destroyed) {
                clearTimeout(timer);
                done({ ...(parsed ?? { status: 0, headers: {}, body: text, rest: '' }), ended, answeredMs });
              } else waiters.push(check);
            };
            check();
          });
        },
        closed(timeoutMs = 30_000) {
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`still open after ${timeoutMs} ms`)), timeoutMs);
            const check = () => {
              if (ended !== 'open' || socket.destroyed) {
                clearTimeout(timer);
                done(ended);
              } else waiters.push(check);
            };
            check();
          });
        },
        statuses(n, timeoutMs = 30_000) {
          return new Promise((done, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`fewer than ${n} answers in ${timeoutMs} ms`)),
              timeoutMs,
            );
            const check = () => {
              const found: number[] = [];
              let text = Buffer.concat(chunks).toString('latin1');
              for (let r = parseResponse(text); r && found.length < n; r = parseResponse(text)) {
                found.push(r.status);
                text = r.rest;
              }
              if (found.length >= n || ended !== 'open' || socket.destroyed) {
                clearTimeout(timer);
                done(found);
              } else waiters.push(check);
            };
            check();
          });
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** A multipart body for the image endpoint: optional scene, one file of `fileBytes` bytes. */
export function imageForm(fileBytes: number, scene?: string): { contentType: string; body: Buffer } {
  const boundary = 'transport-boundary-7d1f';
  const parts: Buffer[] = [];
  if (scene)
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="scene_code"\r\n\r\n${scene}\r\n`),
    );
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    ),
    Buffer.alloc(fileBytes, 0x5a),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

/** The request head of a POST with the given headers. */
export function head(path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  return [`POST ${path} HTTP/1.1`, 'Host: transport.test', ...lines, '', ''].join('\r\n');
}

/** Used and held units of both quotas of `key`'s subject, once the calls' charges and leases settled. */
export async function quotaOf(stack: TestStack, key: string): Promise<unknown> {
  const q = await settledQuota(stack, key);
  return Object.fromEntries(Object.entries(q).map(([k, v]) => [k, { used: v.used, held: v.held }]));
}

/** True when the stack still answers an ordinary authenticated read. */
export async function serving(stack: TestStack, key: string): Promise<boolean> {
  return (await stack.api('GET', '/api/op/v1/scenes', { key })).status === 200;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds or `ms` pass; returns its last value. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  ok: (v: T) => boolean,
  ms = 10_000,
): Promise<T> {
  const until = Date.now() + ms;
  let v = await check();
  while (!ok(v) && Date.now() < until) {
    await sleep(100);
    v = await check();
  }
  return v;
}

/**
 * The stack of one transport test file, with one key: started before its cases; after them, the file
 * checks that the service still serves, that the key's quota did not move and that nothing reached
 * the crash handler, then closes it (both reads in one quota day).
 */
export function transportStack(key: string, subject: string, env?: Record<string, string>): () => TestStack {
  let stack: TestStack | undefined;
  let quotaBefore: unknown;
  keepClearOfQuotaDayTurn();
  beforeAll(async () => {
    stack = await startStack({ keys: `${key}:${subject}`, env });
    quotaBefore = await quotaOf(stack, key);
  }, 120_000);
  afterAll(async () => {
    if (!stack) return;
    expect(await serving(stack, key)).toBe(true);
    expect(await quotaOf(stack, key)).toEqual(quotaBefore);
    // Nothing reached the process-wide crash handler, and no service process exited.
    expect(await fatalErrors(stack)).toEqual({ count: 0, exited: [] });
    await stack.close();
  });
  return () => {
    if (!stack) throw new Error('the stack did not start');
    return stack;
  };
}
