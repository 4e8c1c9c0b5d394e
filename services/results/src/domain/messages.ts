import { z } from 'zod';

/**
 * Bus messages the results service consumes (docs/INTERNAL.md, "Kafka topics"). Parsing is lenient
 * about extra fields (producers may add some) and strict about the fields results relies on.
 */
const finite = z.number().finite();
const unit = finite.min(0).max(1);

const bboxSchema = z.object({
  format: z.literal('cxcywh_normalized').optional(),
  cx: unit,
  cy: unit,
  width: unit,
  height: unit,
});

const objectSchema = z.object({
  label: z.string().min(1).max(200),
  score: unit,
  bbox: bboxSchema,
  track_id: z.union([z.string().max(200), z.number().int()]).optional(),
});

const taskId = z.string().min(1).max(200);
/**
 * A frame's seq, and a count of frames: Postgres `integer`s (result_frames.seq). A message past that range is one
 * results cannot use (skipped, as any other), never a batch that fails forever and holds up its partition.
 */
const seq = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

export const frameMessageSchema = z.object({
  schema: z.literal(1),
  type: z.literal('frame'),
  event_id: z.string().optional(),
  task_id: taskId,
  seq,
  frame_id: z.string().min(1).max(200),
  frame_time_ms: z.number().int(),
  image: z.object({ width: z.number().int().min(0), height: z.number().int().min(0) }),
  objects: z.array(objectSchema).max(10_000),
  lower_bound: unit.optional(),
  /** Wall-clock ms (epoch) the frame was read from the decoder; for vision_results_ingest_lag_seconds. */
  captured_at_ms: z.number().int().positive().optional(),
  /** Tasks' grant for the job (job-grant.ts), checked before the frame is stored; kept as sent. */
  grant: z.unknown().optional(),
  /** The epoch its publisher took the job at: frames of an owner below the task's fence are dropped. */
  epoch: z.number().int().min(0).optional(),
});

export const endMessageSchema = z.object({
  schema: z.literal(1),
  type: z.literal('end'),
  event_id: z.string().optional(),
  task_id: taskId,
  seq: seq.optional(),
  frames: seq,
  status: z.string().min(1).max(50),
  reason: z.string().max(2000).optional(),
  grant: z.unknown().optional(),
  epoch: z.number().int().min(0).optional(),
});

/** A replica took a job at `epoch` (before its first frame): results fences every owner before it. */
export const ownerMessageSchema = z.object({
  schema: z.literal(1),
  type: z.literal('owner'),
  task_id: taskId,
  epoch: z.number().int().min(0),
  grant: z.unknown().optional(),
});

export const taskEventSchema = z.object({
  schema: z.literal(1),
  event_id: z.string().min(1),
  type: z.string().min(1),
  task_id: taskId,
  subject: z.string().min(1).max(500),
  kind: z.enum(['video', 'image']),
  scene_code: z.string().max(100).optional(),
  status: z.string().min(1).max(50),
  business_threshold: unit,
  lower_bound: unit,
  result_expires_at: z.string().datetime({ offset: true }),
  occurred_at: z.string().datetime({ offset: true }),
  /** Additive fields (webhook events): the status before the change, the reason code of an end, the creating request. */
  previous_status: z.string().min(1).max(50).optional(),
  reason: z.string().max(200).nullable().optional(),
  request_id: z.string().max(200).optional(),
  /** Image calls: how many images the call carried and how many succeeded. */
  images: z
    .object({
      total: z.number().int().min(0),
      succeeded: z.number().int().min(0),
      failed: z.number().int().min(0),
    })
    .optional(),
  /**
   * Video tasks with zones or lines: the version in force and the digest of its rule set; the set itself
   * (checked by parseRules where used) on the events that bring one new to the task.
   */
  rules_version: z.number().int().min(0).optional(),
  rules_digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  rules: z.unknown().optional(),
});

/** `vision.quota-events` of type `exhausted` (the other types are not read by results). */
export const quotaExhaustedSchema = z.object({
  schema: z.literal(1),
  event_id: z.string().min(1).max(200),
  type: z.literal('exhausted'),
  subject: z.string().min(1).max(500),
  kind: z.enum(['video', 'image']),
  day: z.string().min(1).max(20),
  limit: z.number().int().min(0),
  used: z.number().int().min(0),
  resets_at: z.string().datetime({ offset: true }),
  occurred_at: z.string().datetime({ offset: true }),
});

/** The tasks service's answer to GET /internal/v1/tasks/{task_id}. */
export const internalTaskSchema = z.object({
  task_id: taskId,
  subject: z.string().min(1).max(500),
  kind: z.enum(['video', 'image']),
  scene_code: z.string().max(100).optional(),
  status: z.string().min(1).max(50),
  business_threshold: unit,
  lower_bound: unit,
  result_expires_at: z.string().datetime({ offset: true }),
});

export type FrameMessage = z.infer<typeof frameMessageSchema>;
export type EndMessage = z.infer<typeof endMessageSchema>;
export type OwnerMessage = z.infer<typeof ownerMessageSchema>;
export type TaskEvent = z.infer<typeof taskEventSchema>;
export type InternalTask = z.infer<typeof internalTaskSchema>;

export type FramesTopicMessage =
  | { kind: 'frame'; frame: FrameMessage }
  | { kind: 'end'; end: EndMessage }
  | { kind: 'owner'; owner: OwnerMessage }
  | { kind: 'invalid'; problem: string };

function describe(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

/** Classifies one value of `vision.frames`. Invalid values are reported, never thrown. */
export function parseFramesTopicMessage(value: unknown): FramesTopicMessage {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (type === 'frame') {
    const r = frameMessageSchema.safeParse(value);
    return r.success ? { kind: 'frame', frame: r.data } : { kind: 'invalid', problem: describe(r.error) };
  }
  if (type === 'end') {
    const r = endMessageSchema.safeParse(value);
    return r.success ? { kind: 'end', end: r.data } : { kind: 'invalid', problem: describe(r.error) };
  }
  if (type === 'owner') {
    const r = ownerMessageSchema.safeParse(value);
    return r.success ? { kind: 'owner', owner: r.data } : { kind: 'invalid', problem: describe(r.error) };
  }
  return { kind: 'invalid', problem: `unknown message type ${JSON.stringify(type)}` };
}

/** A quota event results acts on (`exhausted`), or undefined for any other value. Never throws. */
export function parseQuotaExhausted(value: unknown): z.infer<typeof quotaExhaustedSchema> | undefined {
  const r = quotaExhaustedSchema.safeParse(value);
  return r.success ? r.data : undefined;
}

export function parseTaskEvent(
  value: unknown,
): { ok: true; event: TaskEvent } | { ok: false; problem: string } {
  const r = taskEventSchema.safeParse(value);
  return r.success ? { ok: true, event: r.data } : { ok: false, problem: describe(r.error) };
}
