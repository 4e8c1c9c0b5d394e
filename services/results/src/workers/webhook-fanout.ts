/**
 * Turns bus events into webhook deliveries: `vision.task-events` (task status changes, image call
 * completions) and `vision.quota-events` (`exhausted`), consumed by the group `results-webhooks`. One delivery
 * per subscribed endpoint and event, keyed (endpoint, event id): an event the bus delivers again adds
 * nothing. The batch is committed only after its deliveries are stored, so no event is lost.
 */
import {
  GROUPS,
  TOPICS,
  type Bus,
  type Clock,
  type IncomingMessage,
  type Knex,
  type Logger,
  type Subscription,
} from '@vision/shared';
import { fromQuotaExhausted, fromTaskEvent, type WebhookEvent } from '../domain/webhooks/events';
import { parseQuotaExhausted, parseTaskEvent } from '../domain/messages';
import type { NewDelivery, WebhookDeliveriesStore } from '../store/webhook-deliveries-store';
import type { WebhookEndpointsStore } from '../store/webhook-endpoints-store';

export const WEBHOOKS_GROUP = GROUPS.resultsWebhooks;

/** An endpoint gets the events that happened from this long before its registration on (clock skew). */
const REGISTRATION_SKEW_MS = 5_000;

export interface FanoutDeps {
  endpoints: WebhookEndpointsStore;
  deliveries: WebhookDeliveriesStore;
  clock: Clock;
  logger: Logger;
  horizonMs: number;
  /** Wakes the dispatcher once deliveries were written. */
  wake: () => void;
}

type Traced = WebhookEvent & { traceHeaders: Record<string, string> | null };

function traceOf(m: IncomingMessage): Record<string, string> | null {
  if (!m.headers.traceparent) return null;
  return {
    traceparent: m.headers.traceparent,
    ...(m.headers.tracestate ? { tracestate: m.headers.tracestate } : {}),
  };
}

/** Writes the deliveries of `events` to their subscribed endpoints; returns how many were new. */
export async function fanOut(deps: FanoutDeps, events: Traced[], q?: Knex): Promise<number> {
  const rows: NewDelivery[] = [];
  const byType = new Map<string, Traced[]>();
  for (const e of events) byType.set(e.type, [...(byType.get(e.type) ?? []), e]);
  for (const [type, list] of byType) {
    const subscribers = await deps.endpoints.subscribers(
      list.map((e) => e.subject),
      type,
      q,
    );
    for (const e of list)
      for (const ep of subscribers) {
        if (ep.subject !== e.subject) continue;
        if (e.occurredAt.getTime() < ep.created_at.getTime() - REGISTRATION_SKEW_MS) continue;
        rows.push({
          endpoint_id: ep.endpoint_id,
          delivery_id: e.envelope.id,
          event_type: e.type,
          order_key: e.orderKey,
          body: JSON.stringify(e.envelope),
          trace_headers: e.traceHeaders,
        });
      }
  }
  const added = await deps.deliveries.insert(rows, deps.clock.now(), deps.horizonMs, q);
  if (added > 0) deps.wake();
  return added;
}

function skip(logger: Logger, m: IncomingMessage, problem: string): void {
  logger.warn(
    { topic: m.topic, partition: m.partition, offset: m.offset, problem },
    'skipping an event webhooks cannot use',
  );
}

export function taskEventsToWebhooks(deps: FanoutDeps): (messages: IncomingMessage[]) => Promise<void> {
  return async (messages) => {
    const events: Traced[] = [];
    for (const m of messages) {
      const parsed = parseTaskEvent(m.value);
      if (!parsed.ok) skip(deps.logger, m, parsed.problem);
      // A replacement of a task's zones and lines changes no status: no webhook of its own.
      else if (parsed.event.type !== 'task.rules_changed')
        events.push({ ...fromTaskEvent(parsed.event), traceHeaders: traceOf(m) });
    }
    await fanOut(deps, events);
  };
}

export function quotaEventsToWebhooks(deps: FanoutDeps): (messages: IncomingMessage[]) => Promise<void> {
  return async (messages) => {
    const events: Traced[] = [];
    for (const m of messages) {
      const e = parseQuotaExhausted(m.value);
      if (e) events.push({ ...fromQuotaExhausted(e), traceHeaders: traceOf(m) });
    }
    await fanOut(deps, events);
  };
}

/** Subscribes the webhook fan-out to task and quota events. */
export async function subscribeFanout(bus: Bus, deps: FanoutDeps): Promise<Subscription[]> {
  const subs: Subscription[] = [];
  try {
    subs.push(
      await bus.subscribe({
        topic: TOPICS.taskEvents,
        group: WEBHOOKS_GROUP,
        fromBeginning: true,
        handleBatch: taskEventsToWebhooks(deps),
      }),
    );
    subs.push(
      await bus.subscribe({
        topic: TOPICS.quotaEvents,
        group: WEBHOOKS_GROUP,
        fromBeginning: true,
        handleBatch: quotaEventsToWebhooks(deps),
      }),
    );
  } catch (err) {
    await Promise.allSettled(subs.map((s) => s.close()));
    throw err;
  }
  return subs;
}
