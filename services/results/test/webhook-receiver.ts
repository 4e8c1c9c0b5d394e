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
}

/**
 * A webhook receiver on loopback: records every request, verifies each with the `standardwebhooks` package
 * against the secrets it was given (any of them), and answers as `answer` says (default 204).
 */
export class Receiver {
  readonly received: Received[] = [];
  secrets: string[] = [];
  answer: (r: Received) => Answer = () => ({ status: 204 });
  private server?: Server;
  url = '';

  async start(path = '/hook'): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const r: Received = {
          id: String(req.headers['webhook-id']),
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
        if (a.delayMs) setTimeout(send, a.delayMs).unref();
        else send();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
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
