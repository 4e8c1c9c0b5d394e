/**
 * The calls between the standalone process's main thread and its gateway thread, over one MessagePort
 * (gateway-thread.ts, gateway-host.ts). Each side serves its calls and makes the other's; arguments and
 * answers are structured clones. A call whose side goes away is answered with an error, never left open.
 */
import type { MessagePort } from 'node:worker_threads';
import type { MetricsJson, ReadinessReport } from '@vision/shared';

/** What the gateway thread asks of the main thread: the key store, which lives beside the one database. */
export interface MainCalls {
  /** The subject of an active key (KeyStore.authenticate), null for an unknown or revoked key. */
  authenticate(key: string): Promise<string | null>;
  /** The key database's readiness check. */
  database(): Promise<void>;
}

/** What the main thread asks of the gateway thread. */
export interface EdgeCalls {
  /** The gateway's full readiness report (the internal GET /readyz). */
  readiness(): Promise<ReadinessReport>;
  /** The gateway thread's metrics, served by the process's one /metrics. */
  metrics(): Promise<MetricsJson>;
  /** Stops the gateway: no new connection, the open ones ended, spans flushed. */
  close(): Promise<void>;
}

/** What the main thread tells the gateway thread without asking. */
export interface EdgeEvents {
  /** Revocations made so far (KeyStore.revocations): the gateway's key cache drops what it holds when it moves. */
  revocations: number;
}

type Calls<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };
type Args<F> = F extends (...args: infer A) => Promise<unknown> ? A : never;
type Answer<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

/** One event of `Events`, as its name and value. */
export type EventOf<Events> = { [K in keyof Events & string]: { name: K; value: Events[K] } }[keyof Events &
  string];

type Message =
  | { kind: 'call'; id: number; name: string; args: unknown[] }
  | { kind: 'answer'; id: number; value: unknown }
  | { kind: 'failure'; id: number; message: string }
  | { kind: 'event'; name: string; value: unknown };

export interface Peer<Theirs extends Calls<Theirs>, Events> {
  call<K extends keyof Theirs & string>(name: K, ...args: Args<Theirs[K]>): Promise<Answer<Theirs[K]>>;
  tell<K extends keyof Events & string>(name: K, value: Events[K]): void;
  /** Fails every call still waiting (the other side is gone) and stops listening. */
  close(reason: string): void;
}

/**
 * One side of the port: serves `mine`, calls the other side's, and hands the events it is told to
 * `onEvent`. A served call that throws is answered with its message (a stack stays on its side).
 */
export function connectPeer<Mine extends Calls<Mine>, Theirs extends Calls<Theirs>, Heard, Told>(
  port: MessagePort,
  mine: Mine,
  onEvent: (event: EventOf<Heard>) => void = () => undefined,
): Peer<Theirs, Told> {
  let next = 1;
  let closed: string | undefined;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const post = (m: Message) => port.postMessage(m);
  const serve = async (id: number, name: string, args: unknown[]) => {
    try {
      const fn = (mine as unknown as Record<string, ((...a: unknown[]) => Promise<unknown>) | undefined>)[
        name
      ];
      if (typeof fn !== 'function') throw new Error(`no call named ${name}`);
      post({ kind: 'answer', id, value: await fn.apply(mine, args) });
    } catch (err) {
      post({ kind: 'failure', id, message: err instanceof Error ? err.message : String(err) });
    }
  };
  const onMessage = (m: Message) => {
    if (m.kind === 'call') return void serve(m.id, m.name, m.args);
    if (m.kind === 'event') return onEvent({ name: m.name, value: m.value } as EventOf<Heard>);
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.kind === 'answer') w.resolve(m.value);
    else w.reject(new Error(m.message));
  };
  port.on('message', onMessage);
  return {
    call(name, ...args) {
      if (closed) return Promise.reject(new Error(closed));
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        post({ kind: 'call', id, name, args });
      });
    },
    tell(name, value) {
      if (!closed) post({ kind: 'event', name, value });
    },
    close(reason) {
      closed = reason;
      port.off('message', onMessage);
      for (const w of waiting.values()) w.reject(new Error(reason));
      waiting.clear();
    },
  };
}
