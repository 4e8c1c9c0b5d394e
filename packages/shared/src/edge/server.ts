import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import { awaitContinue } from './early-answer';
import { answerUnparsableRequest } from './unparsable-request';

/**
 * The connection limits of every HTTP server of the service, set here and nowhere else (see
 * docs/CONNECTIONS.md). A slow client holds a connection for at most these times; none holds a thread.
 */
export const SERVER_LIMITS = {
  /** A request head (request line and headers) must arrive whole within this (slowloris): 408. */
  headersTimeoutMs: 20_000,
  /** An idle keep-alive connection is closed after this; the gateway's pool closes its own at 4 s. */
  keepAliveTimeoutMs: 5_000,
  /** A connection on which nothing moves either way (a client that stopped reading) is closed; above the gateway's upstream timeout (120 s), so a slow upstream still gets its 503 out. */
  socketIdleMs: 180_000,
  /**
   * Connections the kernel holds, complete but not yet accepted (the listen backlog; the kernel caps it
   * at net.core.somaxconn). The process accepts as fast as its event loop turns, so this queue holds a
   * caller no longer than one turn of the loop while fewer than this many connect at once; beyond it the
   * kernel drops the SYN and the client retransmits it (1 s later).
   */
  acceptBacklog: 511,
} as const;

export interface ListenOptions {
  /**
   * Judge a request that sends `Expect: 100-continue` on its head: the app gets it at once, without the
   * automatic `100 Continue`, and lets the body come with sendContinue() once the request is admitted
   * (the gateway). Without it, Node answers `100 Continue` before the app sees the request.
   */
  judgeExpect?: boolean;
}

/** The requests each server opened by listen() is answering now, for the drain at shutdown. */
const inFlight = new Map<Server, Set<ServerResponse>>();
/** Servers draining: their answers close the connection after them. */
const draining = new WeakSet<Server>();

function track(server: Server, res: ServerResponse): void {
  const answering = inFlight.get(server);
  if (!answering) return;
  answering.add(res);
  res.once('close', () => answering.delete(res));
  if (draining.has(server)) res.shouldKeepAlive = false;
}

/** Starts listening; resolves with the server once the port is bound. */
export function listen(
  app: Express,
  port: number,
  host = '0.0.0.0',
  opts: ListenOptions = {},
): Promise<Server> {
  return new Promise((resolve, reject) => {
    // Node checks the head and request deadlines every `connectionsCheckingInterval` (default 30 s).
    const server = createServer({ connectionsCheckingInterval: 1000 }, app);
    server.listen(port, host, SERVER_LIMITS.acceptBacklog);
    // No deadline for a whole request: Node's default (300 s) cuts a slow but steady 512 MB upload.
    // Stalled uploads are cut by the gateway's idle timer instead (GATEWAY_UPLOAD_IDLE_MS).
    server.requestTimeout = 0;
    server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
    server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs;
    server.timeout = SERVER_LIMITS.socketIdleMs;
    // A connection that has not sent a request yet gets the head deadline as its idle time: Node's own
    // head deadline starts only with the first byte, so a silent connection would stay socketIdleMs.
    server.on('connection', (socket: Socket) => socket.setTimeout(SERVER_LIMITS.headersTimeoutMs));
    inFlight.set(server, new Set());
    server.once('close', () => inFlight.delete(server));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      req.socket.setTimeout(SERVER_LIMITS.socketIdleMs);
      track(server, res);
    });
    if (opts.judgeExpect)
      server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        req.socket.setTimeout(SERVER_LIMITS.socketIdleMs);
        track(server, res);
        awaitContinue(req);
        app(req, res);
      });
    server.on('clientError', answerUnparsableRequest);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/**
 * The graceful part of a process's stop (runMain, on SIGTERM): every server listen() opened stops taking
 * connections, its idle keep-alive connections close, and each answer in flight finishes and then closes its
 * connection. Resolves once none is left, or at `deadlineMs`, when what is left (a results stream, an upload
 * still arriving) is cut; a stream's reader resumes elsewhere with Last-Event-ID. Before the stop, the pod's
 * preStop pause lets the endpoints stop sending here (charts/vision, `shutdown`).
 */
export async function drainServers(deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  const servers = [...inFlight.keys()];
  for (const server of servers) {
    draining.add(server);
    for (const res of inFlight.get(server) ?? []) if (!res.headersSent) res.shouldKeepAlive = false;
    server.close(() => undefined);
  }
  const busy = () => servers.some((server) => (inFlight.get(server)?.size ?? 0) > 0);
  while (busy() && Date.now() < until) {
    // An answer sent before the drain began left its connection open for the next request: close it once idle.
    for (const server of servers) server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const server of servers) server.closeAllConnections();
}
