/**
 * The webhook event catalogue and the CloudEvents 1.0 envelope (JSON format) every delivery carries.
 * Pure: maps bus messages to the events endpoints can subscribe to.
 */
import type { AnalyticsEvent } from '../analytics';
import type { TaskEvent } from '../messages';

/** Event types an endpoint can subscribe to (docs/WEBHOOKS.md). */
export const EVENT_TYPES = [
  'vision.task.status_changed',
  'vision.task.frames_available',
  'vision.image_detection.completed',
  'vision.quota.exhausted',
  'vision.zone.entered',
  'vision.zone.exited',
  'vision.zone.dwell_exceeded',
  'vision.zone.occupancy_exceeded',
  'vision.zone.occupancy_cleared',
  'vision.line.crossed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Sent once at registration, to the new endpoint only; not subscribable. */
export const VERIFICATION_EVENT = 'vision.webhook.verification';

export interface CloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  subject?: string;
  time: string;
  datacontenttype: 'application/json';
  data: Record<string, unknown>;
}

/** A webhook event ready to fan out: who it is for, its envelope, and what orders it. */
export interface WebhookEvent {
  subject: string;
  type: EventType;
  /** Deliveries of one endpoint with the same key are sent one after the other, in creation order. */
  orderKey: string;
  /** When the change happened (an endpoint gets only events that happened after it was registered). */
  occurredAt: Date;
  envelope: CloudEvent;
}

export function cloudEvent(
  id: string,
  source: string,
  type: string,
  time: Date,
  data: Record<string, unknown>,
  subject?: string,
): CloudEvent {
  return {
    specversion: '1.0',
    id,
    source,
    type,
    ...(subject !== undefined ? { subject } : {}),
    time: time.toISOString(),
    datacontenttype: 'application/json',
    data,
  };
}

const taskSource = (taskId: string) => `/v1/vision/tasks/${encodeURIComponent(taskId)}`;

/**
 * The webhook event of a `vision.task-events` message: a video task's status change (the first event of a
 * task is its first submission outcome, `previous_status` `submitting`), or an image call's completion.
 */
export function fromTaskEvent(e: TaskEvent): WebhookEvent {
  const occurredAt = new Date(e.occurred_at);
  if (e.kind === 'image') {
    const data: Record<string, unknown> = {
      task_id: e.task_id,
      scene_code: e.scene_code,
      status: e.status,
      result_expires_at: e.result_expires_at,
    };
    if (e.request_id !== undefined) data.request_id = e.request_id;
    if (e.images !== undefined) data.images = e.images;
    return {
      subject: e.subject,
      type: 'vision.image_detection.completed',
      orderKey: e.task_id,
      occurredAt,
      envelope: cloudEvent(
        e.event_id,
        taskSource(e.task_id),
        'vision.image_detection.completed',
        occurredAt,
        data,
        e.task_id,
      ),
    };
  }
  const data: Record<string, unknown> = {
    task_id: e.task_id,
    scene_code: e.scene_code,
    status: e.status,
    previous_status: e.previous_status ?? (e.type === 'task.created' ? 'submitting' : undefined),
    result_expires_at: e.result_expires_at,
  };
  if (data.previous_status === undefined) delete data.previous_status;
  if (e.request_id !== undefined) data.request_id = e.request_id;
  if (e.reason !== undefined && e.reason !== null) data.reason = e.reason;
  return {
    subject: e.subject,
    type: 'vision.task.status_changed',
    orderKey: e.task_id,
    occurredAt,
    envelope: cloudEvent(
      e.event_id,
      taskSource(e.task_id),
      'vision.task.status_changed',
      occurredAt,
      data,
      e.task_id,
    ),
  };
}

/** A `vision.quota-events` message of type `exhausted`: the day's units of a kind are all used. */
export interface QuotaExhaustedMessage {
  event_id: string;
  subject: string;
  kind: string;
  day: string;
  limit: number;
  used: number;
  resets_at: string;
  occurred_at: string;
}

export function fromQuotaExhausted(e: QuotaExhaustedMessage): WebhookEvent {
  const occurredAt = new Date(e.occurred_at);
  return {
    subject: e.subject,
    type: 'vision.quota.exhausted',
    orderKey: `quota:${e.kind}`,
    occurredAt,
    envelope: cloudEvent(e.event_id, '/v1/vision/quota', 'vision.quota.exhausted', occurredAt, {
      kind: e.kind,
      day: e.day,
      limit: e.limit,
      used: e.used,
      resets_at: e.resets_at,
    }),
  };
}

/** New frames of a running task: where to read them (cursors) and how many, never the frames. */
export function framesAvailable(a: {
  eventId: string;
  subject: string;
  taskId: string;
  at: Date;
  cursor: string;
  nextCursor: string;
  newFrames: number;
  framesStored: number;
}): WebhookEvent {
  return {
    subject: a.subject,
    type: 'vision.task.frames_available',
    orderKey: a.taskId,
    occurredAt: a.at,
    envelope: cloudEvent(
      a.eventId,
      taskSource(a.taskId),
      'vision.task.frames_available',
      a.at,
      {
        task_id: a.taskId,
        cursor: a.cursor,
        next_cursor: a.nextCursor,
        new_frames: a.newFrames,
        frames_stored: a.framesStored,
      },
      a.taskId,
    ),
  };
}

/** The event sent to a URL at registration; it must answer 2xx. */
export function verificationEvent(id: string, endpointId: string, at: Date): CloudEvent {
  return cloudEvent(id, `/v1/vision/webhooks/${endpointId}`, VERIFICATION_EVENT, at, {
    endpoint_id: endpointId,
  });
}

/**
 * A zone or line event of a task's analytics (docs/ANALYTICS.md): type `vision.` + its kind, `data` the event,
 * and the event's deterministic id as the CloudEvents id, so a delivery written again after a restart is the same
 * delivery.
 */
export function analyticsWebhookEvent(e: AnalyticsEvent, subject: string, at: Date): WebhookEvent {
  const type = `vision.${e.kind}` as EventType;
  return {
    subject,
    type,
    orderKey: e.task_id,
    occurredAt: at,
    envelope: cloudEvent(e.id, taskSource(e.task_id), type, at, { ...e }, e.task_id),
  };
}
