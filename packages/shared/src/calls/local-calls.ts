import type { CallOptions, CallResult } from './service-client';

/**
 * A service's answer, given in this process, to a call from another service of the same process: standalone
 * runs all six in one. It answers as the service's HTTP route would (status, envelope, Retry-After), or
 * returns undefined for a call it does not take, which then goes over HTTP. `signal` aborts when the
 * caller's timeout passes or the caller gives up.
 */
export type LocalAnswerer = (
  path: string,
  opts: CallOptions,
  signal: AbortSignal,
) => Promise<CallResult> | undefined;

/**
 * The answerers of the services that run in this process, by service name. A service registers its own
 * when it starts and removes it when it stops; a client of that service asks for it when it is built.
 * Standalone has one registry, and only when no hop of the operator's stands between two services.
 */
export class LocalCalls {
  private readonly answerers = new Map<string, LocalAnswerer>();

  register(service: string, answer: LocalAnswerer): () => void {
    this.answerers.set(service, answer);
    return () => {
      if (this.answerers.get(service) === answer) this.answerers.delete(service);
    };
  }

  /** The answerer of `service` for a client built now; it looks the service up again on each call. */
  answererFor(service: string): LocalAnswerer {
    return (path, opts, signal) => this.answerers.get(service)?.(path, opts, signal);
  }
}
