import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The verified CloudEvent, when a secret was set and the signature checked out. */
  event?: { id: string; type: string; source: string; subject?: string; data: Record<string, unknown> };
  verified: boolean;
  at: number;
}

/** How the receiver answers the next request. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** The answer waits for this too (a receiver that holds a request until the test lets it go). */
  until?: Promise<unknown>;
}

/**
 * A webhook receiver (on loopback by default): records every request, verifies each with the `standardwebhooks` package
 * against the secrets it was given (any of them), and answers as `answer` says (default 204).
 */
export class Receiver {
  readonly received: Received[] = [];
  secrets: string[] = [];
  answer: (r: Received) => Answer = () => ({ status: 204 });
  /** Requests whose sender closed the connection before the answer was sent. */
  readonly cut: Received[] = [];
  /** The most requests of one webhook-id open at the same time (arrival to answer or close). */
  overlap = 0;
  private readonly open = new Map<string, number>();
  private server?: Server;
  url = '';

  /** Listens on `host` (loopback unless a test's other end is elsewhere, e.g. a cluster's pods). */
  async start(path = '/hook', host = '127.0.0.1'): Promise<this> {
    this.server = createServer((req, res) => {
      const id = String(req.headers['webhook-id']);
      this.open.set(id, (this.open.get(id) ?? 0) + 1);
      this.overlap = Math.max(this.overlap, this.open.get(id)!);
      res.on('close', () => this.open.set(id, this.open.get(id)! - 1));
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const r: Received = {
          id,
          headers: req.headers,
          body,
          verified: false,
          at: Date.now(),
        };
        for (const s of this.secrets) {
          try {
            r.event = new Webhook(s).verify(body, req.headers as Record<string, string>) as Received['event'];
            r.verified = true;
            break;
          } catch {
            // another secret may match
          }
        }
        this.received.push(r);
        const a = this.answer(r);
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(a.status, a.headers ?? {});
          res.end();
        };
        res.on('close', () => {
          if (!res.writableEnded) this.cut.push(r);
        });
        const delayed = a.delayMs
          ? new Promise((resolve) => setTimeout(resolve, a.delayMs).unref())
          : undefined;
        if (!delayed && !a.until) send();
        else void Promise.all([delayed, a.until]).then(send, send);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}${path}`;
    return this;
  }

  /** Verified events other than the registration check, each webhook-id once (first arrival), in arrival order. */
  events(): NonNullable<Received['event']>[] {
    const seen = new Set<string>();
    const out: NonNullable<Received['event']>[] = [];
    for (const r of this.received) {
      if (!r.verified || !r.event || r.event.type === 'vision.webhook.verification' || seen.has(r.id))
        continue;
      seen.add(r.id);
      out.push(r.event);
    }
    return out;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
