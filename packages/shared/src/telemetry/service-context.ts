import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which service the running code belongs to. A distributed process runs one service (runMain sets it
 * as the process default); the standalone process runs all six, and each service's start() runs
 * inside runInService(name), so everything it schedules (timers, servers, connections, bus
 * deliveries) carries the name through async continuations. Spans take their service (their Jaeger
 * process) from it, and metrics their `service` label.
 */
const store = new AsyncLocalStorage<string>();
let processService = 'vision';

export function setProcessService(name: string): void {
  processService = name;
}

/** The service of the code running now: the innermost runInService, else the process default. */
export function currentService(): string {
  return store.getStore() ?? processService;
}

export function runInService<T>(name: string, fn: () => T): T {
  return store.run(name, fn);
}
