import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How an answer leaves when the request's body has not all arrived yet (a refusal before the body was
 * read: bad header, unknown scene, too large, no key; or an upstream's early answer relayed by the
 * gateway). The rule, the same in the gateway and every service:
 *
 * 1. The answer is written at once, whole (head and body, with its Content-Length), so that a client
 *    that reads while it sends (curl, undici) stops sending and reads it now.
 * 2. The rest of the body is read and thrown away, never stored, up to `bound` bytes: a client that
 *    reads only after sending everything (Python `requests`, most SDKs) finishes sending, then reads.
 * 3. Only when the body has ended does the response end; a keep-alive connection then serves the
 *    next request, and a `Connection: close` one closes. Closing earlier would make the kernel reset
 *    the connection over the unread bytes, and the client would lose the answer it had not read yet.
 * 4. A body that goes past `bound`, or sends nothing for `idleMs`, ends the response, and the
 *    connection closes `LINGER_MS` later (nginx's lingering close): the answer had its chance.
 */
export interface EarlyAnswerLimits {
  /** Bytes of the rest of the body read and discarded before the connection is closed. */
  bound: number;
  /** A body that sends nothing for this long is not waited for any longer. */
  idleMs: number;
}

/** How long a connection stays open, still discarding what arrives, after a cut answer ended. */
export const LINGER_MS = 2000;

/** The discard limits when no route set its own (see setEarlyAnswerLimits). */
const DEFAULT_LIMITS: EarlyAnswerLimits = { bound: 1024 * 1024, idleMs: 30_000 };

const limitsOf = new WeakMap<IncomingMessage, EarlyAnswerLimits>();

/** Sets how much of a refused body this request may still send (its endpoint's limit). */
export function setEarlyAnswerLimits(req: IncomingMessage, limits: Partial<EarlyAnswerLimits>): void {
  limitsOf.set(req, { ...DEFAULT_LIMITS, ...limitsOf.get(req), ...limits });
}

/** True while the request's body is still arriving. */
export function bodyPending(req: IncomingMessage): boolean {
  return !req.complete && !req.readableEnded && !req.destroyed;
}

const ending = new WeakSet<ServerResponse>();
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Marks a request whose client sent `Expect: 100-continue` and waits for `100 Continue` before it sends
 * its body (the server's 'checkContinue' event): nothing of the body comes until sendContinue().
 */
export function awaitContinue(req: IncomingMessage): void {
  awaitingContinue.add(req);
}

/** Lets a client that waits for it send its body (`100 Continue`): call once the request is admitted. */
export function sendContinue(req: IncomingMessage, res: ServerResponse): void {
  if (awaitingContinue.delete(req) && !res.headersSent && !res.destroyed) res.writeContinue();
}

/**
 * A final answer to a client still waiting for `100 Continue` keeps the connection (Node would close it):
 * the client either sends its body anyway, which is then read and thrown away like any refused body, or
 * closes the connection itself, as RFC 9110 10.1.1 lets it. A client's own `Connection: close` stands.
 */
function keepAliveOverExpect(req: IncomingMessage, res: ServerResponse): void {
  if (!awaitingContinue.has(req) || res.headersSent) return;
  if (/\bclose\b/i.test(String(req.headers.connection ?? ''))) return;
  res.setHeader('Connection', 'keep-alive');
}

/**
 * Ends `res` (after writing `chunk`, when given) by the rule above. Safe to call at any time: once
 * the response has ended or its connection is gone it does nothing.
 */
export function endAfterBody(req: IncomingMessage, res: ServerResponse, chunk?: string | Buffer): void {
  if (res.writableEnded || res.destroyed || ending.has(res)) return;
  keepAliveOverExpect(req, res);
  if (!bodyPending(req)) {
    res.end(chunk);
    return;
  }
  ending.add(res);
  if (chunk !== undefined) res.write(chunk);
  const { bound, idleMs } = limitsOf.get(req) ?? DEFAULT_LIMITS;
  let discarded = 0;
  let idle: NodeJS.Timeout | undefined;
  const finish = (cut: boolean) => {
    clearTimeout(idle);
    req.off('data', onData);
    if (cut) {
      // The connection cannot serve another request: close it, after the client had time to read.
      res.once('finish', () => setTimeout(() => req.socket.destroy(), LINGER_MS).unref());
      req.on('data', () => undefined);
    }
    if (!res.writableEnded && !res.destroyed) res.end();
  };
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => finish(true), idleMs);
    idle.unref();
  };
  function onData(part: Buffer) {
    discarded += part.length;
    if (discarded > bound) return finish(true);
    arm();
  }
  req.on('data', onData);
  req.once('end', () => finish(false));
  req.once('close', () => finish(false));
  req.on('error', () => undefined);
  arm();
  req.resume();
}
