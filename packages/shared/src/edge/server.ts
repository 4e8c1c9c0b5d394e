import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
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
  /** The idle time of a keep-alive connection (default SERVER_LIMITS.keepAliveTimeoutMs). */
  keepAliveTimeoutMs?: number;
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
    server.keepAliveTimeout = opts.keepAliveTimeoutMs ?? SERVER_LIMITS.keepAliveTimeoutMs;
    server.timeout = SERVER_LIMITS.socketIdleMs;
    // A connection that has not sent a request yet gets the head deadline as its idle time: Node's own
    // head deadline starts only with the first byte, so a silent connection would stay socketIdleMs.
    server.on('connection', (socket: Socket) => socket.setTimeout(SERVER_LIMITS.headersTimeoutMs));
    inFlight.set(server, new Set());
    server.once('close', () => inFlight.delete(server));
    // Before the app's own listener: an answer the app sends at once is already known to the drain.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
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

/** net.Server's close: no new connection is taken, and the open ones are left to end (`closed` runs then). */
const stopAccepting = (server: Server, closed: () => void): void =>
  void NetServer.prototype.close.call(server, () => closed());

/**
 * The graceful part of a process's stop (runMain, on SIGTERM): every server listen() opened stops taking
 * connections, and each open connection ends after its next answer (`Connection: close`): the answers in flight
 * finish, and a keep-alive connection that is idle carries its client's next request, if one comes, before it closes.
 * An idle connection is never closed from this side while its client may be sending on it: its client closes it
 * (the gateway's pool after 4 s idle, undici's by the `Keep-Alive` hint), or the keep-alive timeout does. Resolves
 * once no connection is left, or at `deadlineMs`, when what is left (a results stream, an upload still arriving) is
 * cut; a stream's reader resumes elsewhere with Last-Event-ID. Before the stop, the pod's preStop pause lets the
 * endpoints stop sending here (charts/vision, `shutdown`).
 */
export async function drainServers(deadlineMs: number): Promise<void> {
  const servers = [...inFlight.keys()];
  const ended = servers.map(
    (server) =>
      new Promise<void>((resolve) => {
        draining.add(server);
        for (const res of inFlight.get(server) ?? []) if (!res.headersSent) res.shouldKeepAlive = false;
        // Not http.Server's close: it would close the idle keep-alive connections at once, and a request its
        // client was sending on one as it closed would be reset, never to reach a handler.
        stopAccepting(server, resolve);
      }),
  );
  let deadline: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(ended),
    new Promise((resolve) => (deadline = setTimeout(resolve, deadlineMs))),
  ]);
  clearTimeout(deadline);
  for (const server of servers) {
    server.close();
    server.closeAllConnections();
  }
}
