/**
 * Zones and lines on a video task (docs/ANALYTICS.md): the rules in force and their replacement, the analytics,
 * the events (page by page, or pushed live over Server-Sent Events) and their pictures, the tracks' best shots, and
 * the replay of a rule set over a task's stored frames.
 */
import type { Client } from 'openapi-fetch';
import { pictureOf, pictureQuery, type Picture, type PictureOptions } from './pictures';
import { iterateResultPages, type CursorPage } from './results';
import { followServerEvents, type FollowOptions, type OpenStream } from './stream';
import type { components, paths } from './types';

type Schemas = components['schemas'];
export type Zone = Schemas['Zone'];
export type Line = Schemas['Line'];
export type TaskRules = Schemas['TaskRules'];
export type Analytics = Schemas['Analytics'];
export type ZoneSummary = Schemas['ZoneSummary'];
export type LineSummary = Schemas['LineSummary'];
export type AnalyticsEvent = Schemas['AnalyticsEvent'];
export type ImageZoneCounts = Schemas['ImageZoneCounts'];
/** Why an event (or a track) has no picture: `frame_gone`, `capture_failed` or `not_captured`. */
export type SnapshotReason = Schemas['SnapshotReason'];

/** Fields the service fills in with their defaults when a request leaves them out. */
type WithDefaults<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;
export type OccupancyAlertInput = WithDefaults<Schemas['OccupancyAlert'], 'hysteresis_ms'>;
/** A zone as a request sends it: every field with a default may be left out. */
export type ZoneInput = WithDefaults<
  Omit<Zone, 'occupancy'>,
  'min_score' | 'enter_ms' | 'exit_ms' | 'lost_grace_ms' | 'switch_distance'
> & { occupancy?: OccupancyAlertInput[] };
/** A line as a request sends it: every field with a default may be left out. */
export type LineInput = WithDefaults<Line, 'min_score' | 'hysteresis_ms'>;
/** Zones and lines together at most 20, ids unique across both. */
export interface RuleSetInput {
  zones?: ZoneInput[];
  lines?: LineInput[];
}

export interface EventPage {
  items: AnalyticsEvent[];
  next_cursor: string;
}

export interface EventsOptions {
  /** Events per page, 1..500 (default 500). */
  limit?: number;
  /** Resume from a cursor of an earlier page. */
  cursor?: string;
  /**
   * What to do when a page comes back empty while the task is still running: `true` (default) polls every
   * `pollIntervalMs` until the task ends and every event is delivered; `false` stops there.
   */
  follow?: boolean;
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

export type FollowEventsOptions = Omit<FollowOptions, 'minScore'>;

export interface ReplayResult {
  analytics: Analytics;
  /** The first `maxEvents` events of this request's frames (default 1,000). */
  events: AnalyticsEvent[];
  /** Every event this request's frames gave. */
  events_total: number;
  /** Stored frames this request evaluated (at most the service's RESULTS_REPLAY_MAX_FRAMES). */
  frames: number;
  /** Pass it as `cursor` with the same rules to go on; `""` once every stored frame is in. */
  next_cursor: string;
}

type Unwrap = <T>(call: Promise<{ data?: T; error?: unknown; response: Response }>) => Promise<T>;
const taskPath = (taskId: string) => ({ path: { task_id: taskId } });
/** The generated request types mark defaulted fields as required; the service fills them in. */
const asRuleSet = (rules: RuleSetInput) => rules as Schemas['RuleSet'];

export class PlacesApi {
  constructor(
    private readonly api: Client<paths>,
    private readonly unwrap: Unwrap,
    /** Opens the event stream at a path of the service. */
    private readonly openStream: (path: string) => OpenStream,
    private readonly fail: (res: Response) => Promise<Error>,
  ) {}

  /** The zones and lines in force (every default filled in) and their `rules_version` (0: never had rules). */
  getRules(taskId: string): Promise<TaskRules> {
    return this.unwrap(this.api.GET('/v1/vision/tasks/{task_id}/rules', { params: taskPath(taskId) }));
  }

  /**
   * Replaces the task's whole rule set while it runs, with no restart: a set that differs becomes
   * `rules_version` + 1; unchanged rules keep their state. Answers the rules in force after the request.
   */
  replaceRules(taskId: string, rules: RuleSetInput): Promise<TaskRules> {
    return this.unwrap(
      this.api.PUT('/v1/vision/tasks/{task_id}/rules', { params: taskPath(taskId), body: asRuleSet(rules) }),
    );
  }

  /** Per rule: counts in and out by label, occupancy, visits and dwell, as of the frame `as_of_seq`. */
  analytics(taskId: string): Promise<Analytics> {
    return this.unwrap(this.api.GET('/v1/vision/tasks/{task_id}/analytics', { params: taskPath(taskId) }));
  }

  /** One page of the task's events, in the order they were decided. */
  eventPage(taskId: string, opts: { cursor?: string; limit?: number } = {}): Promise<EventPage> {
    const query = {
      ...(opts.cursor ? { cursor: opts.cursor } : {}),
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    };
    return this.unwrap(
      this.api.GET('/v1/vision/tasks/{task_id}/events', { params: { ...taskPath(taskId), query } }),
    );
  }

  /** Every event of the task, each once, in order, following the cursor (see EventsOptions for running tasks). */
  async *events(taskId: string, opts: EventsOptions = {}): AsyncGenerator<AnalyticsEvent> {
    const limit = opts.limit ?? 500;
    const pages = iterateResultPages<EventPage & CursorPage>(
      (cursor) => this.eventPage(taskId, { cursor, limit }),
      opts,
    );
    for await (const page of pages) yield* page.items;
  }

  /**
   * Every event pushed over the live stream (Server-Sent Events), each once, in order, until the task ends and
   * every event was sent; reconnects with `Last-Event-ID` when the connection drops.
   */
  followEvents(taskId: string, opts: FollowEventsOptions = {}): AsyncGenerator<AnalyticsEvent> {
    const open = this.openStream(`/v1/vision/tasks/${encodeURIComponent(taskId)}/events/stream`);
    return followServerEvents<AnalyticsEvent>(open, this.fail, 'zone_event', opts);
  }

  /**
   * The picture of the frame an event was decided on, with the event's object's box drawn (the zone's polygon for
   * an event without a track); `crop: true` answers the box alone. The same bytes on every read. An event without
   * a picture (`has_snapshot: false`) throws VisionApiError 404 `OP-TASK-NO-SNAPSHOT`, its `details.snapshot_reason`
   * saying why; an unknown event, or one of another subject's task, 404 `OP-NOT-FOUND`.
   */
  eventSnapshot(taskId: string, eventId: string, opts: PictureOptions = {}): Promise<Picture> {
    return pictureOf(
      this.api.GET('/v1/vision/tasks/{task_id}/events/{event_id}/snapshot', {
        params: { path: { task_id: taskId, event_id: eventId }, query: pictureQuery(opts) },
        parseAs: 'arrayBuffer',
        signal: opts.signal,
      }),
    );
  }

  /**
   * A track's best picture so far (tasks with zones or lines; the result frames' tracked objects name it in
   * `best_shot_path`), box drawn, or the box alone with `crop: true`. It may improve while the track lasts. A
   * track without one (yet), or a track id the task does not have, throws VisionApiError 404 `OP-TASK-NO-SNAPSHOT`,
   * `not_captured`.
   */
  bestShot(taskId: string, trackId: string, opts: PictureOptions = {}): Promise<Picture> {
    return pictureOf(
      this.api.GET('/v1/vision/tasks/{task_id}/tracks/{track_id}/best_shot', {
        params: { path: { task_id: taskId, track_id: trackId }, query: pictureQuery(opts) },
        parseAs: 'arrayBuffer',
        signal: opts.signal,
      }),
    );
  }

  /**
   * Evaluates a rule set over the task's stored frames (finished or running) in a fresh engine: the task's own
   * rules and events are not touched, nothing is re-decoded, and the same rules give the same events and ids.
   * One call evaluates at most `maxFrames` frames (the service's limit by default); with frames left, call again
   * with the same rules and `cursor` = the answer's `next_cursor` (docs/ANALYTICS.md, "Replaying long footage").
   */
  replay(
    taskId: string,
    rules: RuleSetInput,
    opts: { maxEvents?: number; maxFrames?: number; cursor?: string } = {},
  ): Promise<ReplayResult> {
    const body = {
      ...asRuleSet(rules),
      ...(opts.maxEvents !== undefined ? { max_events: opts.maxEvents } : {}),
      ...(opts.maxFrames !== undefined ? { max_frames: opts.maxFrames } : {}),
      ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}),
    };
    return this.unwrap(
      this.api.POST('/v1/vision/tasks/{task_id}/analytics/replay', { params: taskPath(taskId), body }),
    );
  }
}
