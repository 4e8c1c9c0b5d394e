/**
 * Clients of the real Jaeger (query API) and Prometheus (HTTP API) that scripts/stack runs for the
 * distributed suite (scripts/stack/start.sh jaeger prometheus): the services export their spans to that
 * Jaeger, and that Prometheus scrapes every process of a deployment (launcher: file service discovery,
 * series labelled `deployment`).
 */
import { randomBytes } from 'node:crypto';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { waitFor } from './media-server';

/** How long a file waits for the observability backends: on a fresh machine their build takes minutes. */
const BACKENDS_WAIT_MS = 30 * 60_000;

/**
 * For a file that reads traces or series: before its deployment starts (its services export spans only to a Jaeger
 * that runs when they start), waits until the stack runs Jaeger and Prometheus. scripts/stack/session.sh starts them
 * once their build is done, and the distributed suite runs the files that call this last
 * (test/helpers/background-builds-last-sequencer.js), so that the rest runs while they build.
 */
export function awaitObservabilityBackends(): void {
  beforeAll(async () => {
    await waitFor(
      'Jaeger and Prometheus to run (scripts/stack/session.sh starts them once built)',
      async () => {
        const env = readStackEnv();
        return env.jaegerUrl && env.prometheusUrl ? true : undefined;
      },
      BACKENDS_WAIT_MS,
    );
  }, BACKENDS_WAIT_MS + 10_000);
}

/** The stack's Jaeger query API (scripts/stack/start.sh jaeger). */
export function jaegerUrl(): string {
  const url = readStackEnv().jaegerUrl;
  if (!url) throw new Error('Jaeger is not running: scripts/stack/start.sh jaeger');
  return url;
}

/** The stack's Prometheus HTTP API (scripts/stack/start.sh prometheus). */
export function prometheusUrl(): string {
  const url = readStackEnv().prometheusUrl;
  if (!url) throw new Error('Prometheus is not running: scripts/stack/start.sh prometheus');
  return url;
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query; the result vector. */
export async function promQuery(expr: string): Promise<PromSample[]> {
  const res = await fetch(`${prometheusUrl()}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { result: PromSample[] } };
  if (body.status !== 'success') throw new Error(`prometheus query ${expr}: ${body.error}`);
  return body.data?.result ?? [];
}

/** Waits until the query's result passes `ok`; resolves with it. */
export function waitForProm(
  what: string,
  expr: string,
  ok: (r: PromSample[]) => boolean,
  timeoutMs = 60_000,
): Promise<PromSample[]> {
  return waitFor(
    what,
    async () => {
      const r = await promQuery(expr);
      return ok(r) ? r : undefined;
    },
    timeoutMs,
  );
}

/** A W3C traceparent for a request the test sends, so its trace can be fetched by id. */
export function newTraceparent(): { traceId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, header: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  processID: string;
  references: { refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  logs: { timestamp: number; fields: { key: string; value: unknown }[] }[];
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

/** A span with its service name and tags as a record. */
export interface Span extends JaegerSpan {
  service: string;
  tag: Record<string, unknown>;
  events: Array<Record<string, unknown>>;
}

export async function getTrace(traceId: string): Promise<Span[]> {
  const res = await fetch(`${jaegerUrl()}/api/traces/${traceId}`);
  if (res.status === 404) return [];
  const body = (await res.json()) as { data?: JaegerTrace[] };
  const trace = body.data?.[0];
  if (!trace) return [];
  return trace.spans.map((s) => ({
    ...s,
    service: trace.processes[s.processID]?.serviceName ?? '?',
    tag: Object.fromEntries(s.tags.map((t) => [t.key, t.value])),
    events: s.logs.map((l) => Object.fromEntries(l.fields.map((f) => [f.key, f.value]))),
  }));
}

/** Waits until the trace holds spans passing `ok` (spans arrive in batches from each process). */
export function waitForTrace(
  what: string,
  traceId: string,
  ok: (spans: Span[]) => boolean,
  timeoutMs = 60_000,
): Promise<Span[]> {
  return waitFor(
    what,
    async () => {
      const spans = await getTrace(traceId);
      return ok(spans) ? spans : undefined;
    },
    timeoutMs,
  );
}
