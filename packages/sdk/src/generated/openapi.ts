// Generated from docs/openapi.yaml by `npm run sdk:generate` (openapi-typescript). Do not edit by hand.
export interface paths {
  '/v1/vision/tasks': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List this key's tasks, newest first (task history; our addition) */
    get: operations['listTasks'];
    put?: never;
    /**
     * Create a video task from a stream address
     * @description Validation order: the JSON body (unknown fields refused), `scene_code` (an enabled scene), the
     *     address's syntax and safety (scheme, no private addresses unless configured), then a connectivity
     *     probe. A refusal creates no task and charges no quota.
     */
    post: operations['createStreamTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/video-tasks': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Create a video task from an uploaded MP4 or MOV file */
    post: operations['createFileTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Query a task (video task or image call record) */
    get: operations['getTask'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/stop': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Stop a running task; answers with the task's status after a bounded wait */
    post: operations['stopTask'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/video': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The uploaded video of a file task, streamed back to its owner (extension beyond SPEC.md)
     * @description Owner-only. Supports single byte ranges (`Range: bytes=a-b`, `bytes=a-`, `bytes=-n`) and `If-Range` with the ETag, so a browser's video element can seek. Several ranges or a malformed Range header get the whole file (200). A stream task, an image call record, another key's task or an expired one answer 404.
     */
    get: operations['getTaskVideo'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    /** The headers of the GET above (size, type, ETag), without the body */
    head: operations['headTaskVideo'];
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/results': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Pull result frames page by page
     * @description Frames in the order inference produced them. A frame of a task with zones or lines is returned only once they were evaluated over it, with its zone counts and each object's zones: while the evaluation is behind the stored frames, a page stops at the last evaluated frame and its `next_cursor` resumes right after it.
     */
    get: operations['listResults'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/results/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Result frames pushed as Server-Sent Events while the task runs
     * @description Each `frame` event carries one Frame as JSON and, as its `id`, the cursor after that frame; `Last-Event-ID` (or `cursor`) resumes after it. A frame of a task with zones or lines is sent once they were evaluated over it, as on the page endpoint. `: heartbeat` comments while idle; one `end` event once the task has ended and every frame was sent. A stream closed without `end` is resumed with `Last-Event-ID`.
     */
    get: operations['streamResults'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/snapshot': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The latest picture the decoder took of a running video task (extension beyond SPEC.md)
     * @description Owner-only. A JPEG of a recent decoded frame of the task's stream or file (kept at most once a second, at the size frames are detected at, so at the stream's aspect ratio): the picture to draw zones and lines on, in the same normalized coordinates as the boxes. Only while the task runs: a task that is not running, or whose decoder has delivered no frame yet, answers 409 OP-TASK-NO-PICTURE; an image call record, another key's task or an expired one answer 404. The stream's address never appears in the answer.
     */
    get: operations['getTaskSnapshot'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/rules': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The task's current zones and lines and their rules version */
    get: operations['getTaskRules'];
    /**
     * Replace a video task's zones and lines until it ends (no restart)
     * @description The body is the whole new rule set. When it differs from the rules in force it becomes a new rules version (`rules_version` + 1); the same rules again change nothing (the PUT is idempotent). Rules whose definition is unchanged keep their state, counts and event ids; a changed or removed zone ends its open visits (`zone.exited`, reason `rule_changed` or `rule_removed`). The change applies from the next frame results evaluates. An image call record, another key's task or an expired one answer 404. A task keeps at most 1000 rules versions and 1 MiB of distinct rule sets (each set is stored once, however often it comes back): a new version past either is 400 `rule_history_full`, with `details.limit` `versions` or `bytes` and `details.maximum`, and changes nothing. Rules change only until the task ends: on a task that succeeded, failed, was stopped or refunded, whose event feed is over, any PUT is 409 `OP-TASK-ENDED` (`details.status`) and nothing changes, no event and no webhook follow; run other rules over its frames with the replay instead.
     */
    put: operations['replaceTaskRules'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/analytics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Per rule, counts in and out by label, occupancy, visits and dwell, as of a frame */
    get: operations['getTaskAnalytics'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The task's zone and line events, page by page, in the order they were decided */
    get: operations['listTaskEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/events/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The task's zone and line events pushed as Server-Sent Events
     * @description Each `zone_event` event carries one AnalyticsEvent as JSON and, as its `id`, the events cursor after it; `Last-Event-ID` (or `cursor`) resumes after it. `: heartbeat` comments while idle; one `end` event once the page endpoint would answer an empty `next_cursor`.
     */
    get: operations['streamTaskEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/events/{event_id}/snapshot': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The picture of the frame a zone or line event was decided on, with its object's box drawn
     * @description Owner-only. A JPEG of the frame of the event's `seq` at the size frames are detected at, with the event's object's box drawn (the zone's polygon for an event without a track: occupancy alerts, coverage zones, a visit that ended by being lost or by a rule change). `crop=true` answers the box alone (the zone's bounding box for those). The bytes are stored once when the event is decided and are the same on every read, until the task's results expire or the task is deleted. Another subject's task, an unknown, an expired task or an unknown event answer 404 `OP-NOT-FOUND`, alike; an event without a picture answers 404 `OP-TASK-NO-SNAPSHOT` with `details.snapshot_reason`.
     */
    get: operations['getEventSnapshot'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/tracks/{track_id}/best_shot': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * A track's best picture so far, with its box drawn
     * @description Owner-only; tasks with zones or lines. The frame of the track with the highest detection score among those whose box passes the size rule, measured in pixels at the detection size (shorter side at least 8 px, longer side at least 16 px, 2 px from every edge of the frame; docs/EVIDENCE.md), as JPEG with the box drawn; `crop=true` the box alone. A track none of whose boxes passes gets its best-scoring box, one away from the edges first, and `X-Best-Shot-Rule` says so. Every tracked object of an evaluated result frame names a best shot that answers a picture, unless it could not be taken: 404 `OP-TASK-NO-SNAPSHOT` with `frame_gone` or `capture_failed` (the next frames of the track try again). It changes while the track finds better frames, and not after the task ends. Errors as for an event's snapshot; a track id of no evaluated frame of the task answers 404 `OP-TASK-NO-SNAPSHOT`, `not_captured`.
     */
    get: operations['getTrackBestShot'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/tasks/{task_id}/analytics/replay': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Evaluate a rule set over the task's stored frames (finished or running); nothing is re-decoded
     * @description The rule set runs as rules version 1 from the task's first stored frame on, in a fresh engine: the task's own rules, counts and events are not touched. One request evaluates at most `max_frames` frames (at most the service's `RESULTS_REPLAY_MAX_FRAMES`, 10,000 by default); when frames remain, the answer's `next_cursor` carries the evaluation's state, and the same rules sent again with `cursor` go on from there, until `next_cursor` is empty (every frame stored at that moment evaluated). The pages together answer the same events with the same ids, byte for byte, as one replay of every frame; replaying the rules a task was created with (never replaced) answers exactly the events of `GET .../events`. At most `max_events` events of a request are returned (the first ones); the analytics cover every frame replayed so far. A cursor that is altered, of another task or rule set, or not a replay cursor is 400 `invalid_cursor`. A request also ends at its work budget (rule work times frames, about 0.25 s of one core at most) and answers its `next_cursor` as at `max_frames`; the cursor refers to the rules by their digest and never carries them, so a rule set of the largest size (65,536 bytes as stored) and any cursor fit in one request body. Replays are admitted like other costly calls: a bounded, fair queue per service and at the gateway's door; one that cannot start in time is 503 `overloaded` with `Retry-After`.
     */
    post: operations['replayTaskAnalytics'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/image-detections': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Detect objects in 1..10 images, synchronously */
    post: operations['createImageDetection'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/op/v1/scenes': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The scenes; enabled ones are valid scene_code values */
    get: operations['listScenes'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/quota': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Today's quota for this key's subject (our addition) */
    get: operations['getQuota'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the subject's webhook endpoints (never their secrets) */
    get: operations['listWebhooks'];
    put?: never;
    /** Register a webhook endpoint (after a signed `vision.webhook.verification` event answered 2xx) */
    post: operations['createWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks/{endpoint_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Read one webhook endpoint */
    get: operations['getWebhook'];
    put?: never;
    post?: never;
    /** Delete a webhook endpoint with its delivery log; nothing more is sent to it */
    delete: operations['deleteWebhook'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks/{endpoint_id}/rotate-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Replace the signing secret; the old one keeps signing beside it until previous_secret_expires_at */
    post: operations['rotateWebhookSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks/{endpoint_id}/revoke-previous-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Stop signing with the rotated-out secret now, before previous_secret_expires_at (a leaked secret); the same answer when there is none */
    post: operations['revokePreviousWebhookSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks/{endpoint_id}/deliveries': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The endpoint's delivery log, newest first */
    get: operations['listWebhookDeliveries'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One delivery with its attempts and the event it carries */
    get: operations['getWebhookDelivery'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Put a dead delivery back in line (same webhook-id, a fresh retry horizon) */
    post: operations['redeliverWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/openapi.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** This document (public, no key needed) */
    get: operations['getOpenApi'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    /** @enum {string} */
    WebhookEventType:
      | 'vision.task.status_changed'
      | 'vision.task.frames_available'
      | 'vision.image_detection.completed'
      | 'vision.quota.exhausted'
      | 'vision.zone.entered'
      | 'vision.zone.exited'
      | 'vision.zone.dwell_exceeded'
      | 'vision.zone.occupancy_exceeded'
      | 'vision.zone.occupancy_cleared'
      | 'vision.line.crossed';
    WebhookEndpoint: {
      endpoint_id: string;
      url: string;
      event_types: components['schemas']['WebhookEventType'][];
      description?: string;
      /** @enum {string} */
      status: 'enabled' | 'disabled';
      /** @description `gone`: the receiver answered 410 */
      disabled_reason?: string;
      /**
       * Format: date-time
       * @description while a rotated-out secret still signs
       */
      previous_secret_expires_at?: string;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
    };
    WebhookEndpointWithSecret: {
      endpoint_id: string;
      url: string;
      event_types: components['schemas']['WebhookEventType'][];
      description?: string;
      /** @enum {string} */
      status: 'enabled' | 'disabled';
      /** @description `gone`: the receiver answered 410 */
      disabled_reason?: string;
      /**
       * Format: date-time
       * @description while a rotated-out secret still signs
       */
      previous_secret_expires_at?: string;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
      /** @description the signing secret (Standard Webhooks), shown at creation and rotation only */
      secret: string;
    };
    WebhookDelivery: {
      /** @description the webhook-id header of every attempt */
      delivery_id: string;
      event_type: string;
      /** @enum {string} */
      status: 'pending' | 'delivered' | 'dead';
      attempts: number;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      next_attempt_at?: string;
      /** Format: date-time */
      delivered_at?: string;
      /** Format: date-time */
      dead_at?: string;
      last_status_code?: number;
      last_outcome?: string;
      attempt_log: {
        attempt: number;
        /** Format: date-time */
        started_at: string;
        latency_ms: number;
        status_code?: number;
        /** @enum {string} */
        outcome:
          | 'delivered'
          | 'http_error'
          | 'rate_limited'
          | 'gone'
          | 'redirect'
          | 'timeout'
          | 'unreachable'
          | 'refused_address'
          | 'secret_unavailable';
      }[];
      /** @description the CloudEvents 1.0 envelope sent (single delivery reads only) */
      event?: Record<string, never>;
    };
    /** @enum {string} */
    SceneCode: 'person_vehicle' | 'ship' | 'fishing' | 'fire_smoke' | 'cow_sheep';
    /** @enum {string} */
    TaskStatus:
      'submitting' | 'resolving' | 'running' | 'stopping' | 'stopped' | 'succeeded' | 'failed' | 'refunded';
    Task: {
      task_id: string;
      request_id: string;
      scene_code: components['schemas']['SceneCode'];
      /** @description a TaskStatus for video tasks; `succeeded` for image call records */
      status: string;
      /** @enum {string} */
      kind?: 'video' | 'image';
      /** @description why a task failed or was refunded: `code: message` with a code from the closed list of docs/API.md (stream_unreachable, stream_lost, stream_auth_failed, stream_not_found, stream_refused, stream_unsupported, media_unreadable, no_video_frames, decoder_unavailable, backend_shutdown, backend_lost_job, backend_rejected, backend_unavailable, breaker_open, internal_error, quota_exhausted, charge_refunded, backend_has_no_job, verified_not_created, withdrawn_from_queue, queue_timeout) */
      reason?: string;
      /** Format: date-time */
      result_expires_at: string;
      /** Format: date-time */
      created_at: string;
      /** Format: date-time */
      updated_at: string;
      /** @description video tasks that have or had zones or lines; see GET /v1/vision/tasks/{task_id}/rules */
      rules_version?: number;
    };
    BBox: {
      /** @constant */
      format: 'cxcywh_normalized';
      cx: number;
      cy: number;
      width: number;
      height: number;
    };
    DetectedObject: {
      label: string;
      score: number;
      bbox: components['schemas']['BBox'];
      track_id?: string;
      /** @description evaluated result frames of a task with zones or lines, on an object with a `track_id`: `/v1/vision/tasks/{task_id}/tracks/{track_id}/best_shot`, the track's best picture so far. It answers a picture for every such object (its best-scoring box when none passes the size rule, `X-Best-Shot-Rule` says so), unless the picture could not be taken: 404 `OP-TASK-NO-SNAPSHOT`, `frame_gone` or `capture_failed` */
      best_shot_path?: string;
      /** @description result frames of a task with zones: the ids of the zones the object is counted in at this frame (after hysteresis; for a coverage zone, its box overlaps the zone) */
      zones?: string[];
    };
    Frame: {
      frame_id: string;
      frame_time_ms: number;
      image: {
        width: number;
        height: number;
      };
      objects: components['schemas']['DetectedObject'][];
      /** @description present only when min_score was given */
      objects_total?: number;
      /** @description tasks with zones: per zone id, the zone's occupancy by label after this frame (`*`: all watched labels) and a coverage zone's covered fraction */
      zones?: {
        [key: string]: {
          counts: components['schemas']['Counts'];
          coverage?: number;
        };
      };
    };
    ImageDetection: {
      task_id: string;
      request_id: string;
      /** @constant */
      status: 'succeeded';
      /** @constant */
      replayed?: true;
      results: {
        seq: number;
        /** @enum {string} */
        status: 'succeeded' | 'failed';
        objects?: (components['schemas']['DetectedObject'] & unknown)[];
        error_code?: string;
        /** @description present when the call carried `zones`; one entry per zone, in the zones' order */
        zones?: components['schemas']['ImageZoneCounts'][];
      }[];
    };
    /** @description [x, y], normalized image coordinates (x right, y down), each in [0, 1] */
    Point: number[];
    /**
     * @description the box point that decides inside/outside and the side of a line
     * @default bottom_center
     * @enum {string}
     */
    Anchor:
      | 'bottom_center'
      | 'center'
      | 'top_left'
      | 'top_center'
      | 'top_right'
      | 'center_left'
      | 'center_right'
      | 'bottom_left'
      | 'bottom_right';
    /** @description A rule's name, a watched label, or an occupancy threshold's label (`*`: every watched label together): 1-200 characters, no control characters. */
    RuleText: string;
    /** @description unique across the task's zones and lines */
    RuleId: string;
    OccupancyAlert: {
      label: components['schemas']['RuleText'];
      /** @description raised once the count is above this */
      over: number;
      /** @description cleared once the count is below this; at most `over + 1` (the default) */
      under?: number;
      /** @default 0 */
      hysteresis_ms: number;
    };
    /** @description A polygon (simple: no crossing or touching edges, no repeated vertex; area at least 1e-6). Exact meaning of every field: docs/ANALYTICS.md, "Exact rules". */
    Zone: {
      id: components['schemas']['RuleId'];
      name?: components['schemas']['RuleText'];
      /** @description labels watched; absent or empty, every label */
      labels?: components['schemas']['RuleText'][];
      /** @default 0 */
      min_score: number;
      anchor?: components['schemas']['Anchor'];
      polygon: components['schemas']['Point'][];
      /**
       * @description enter hysteresis (media time)
       * @default 0
       */
      enter_ms: number;
      /**
       * @description exit hysteresis (media time)
       * @default 0
       */
      exit_ms: number;
      /** @description zone.dwell_exceeded once a visit lasts this long */
      dwell_limit_ms?: number;
      /** @default 1000 */
      lost_grace_ms: number;
      /**
       * @description how far (on the image, in units of its longer side) a new track id may appear from a lost one to take its visit over
       * @default 0.05
       */
      switch_distance: number;
      /** @description a coverage zone (fire, smoke) is active while the union of the watched boxes covers this fraction of it */
      coverage?: number;
      occupancy?: components['schemas']['OccupancyAlert'][];
    };
    /** @description A segment at least 0.001 long. "in" is a crossing from the right of start→end to its left as seen on the image (y down), as supervision's LineZone counts `in_count` on the frame's pixels; only the segment counts. */
    Line: {
      id: components['schemas']['RuleId'];
      name?: components['schemas']['RuleText'];
      labels?: components['schemas']['RuleText'][];
      /** @default 0 */
      min_score: number;
      anchor?: components['schemas']['Anchor'];
      start: components['schemas']['Point'];
      end: components['schemas']['Point'];
      /** @default 0 */
      hysteresis_ms: number;
    };
    /** @description zones and lines together at most 20; ids unique across both */
    RuleSet: {
      zones?: components['schemas']['Zone'][];
      lines?: components['schemas']['Line'][];
    };
    TaskRules: {
      task_id: string;
      /** @description 0 while the task never had rules */
      rules_version: number;
      zones: components['schemas']['Zone'][];
      lines: components['schemas']['Line'][];
      /**
       * Format: date-time
       * @description when this version was set
       */
      updated_at?: string;
    };
    /** @description counts by label; `*` is every watched label together where given */
    Counts: {
      [key: string]: number;
    };
    ZoneSummary: {
      /** @constant */
      kind: 'zone';
      id: string;
      name: string;
      /** @description the rules version this rule's definition came with */
      version: number;
      /** @enum {string} */
      mode: 'anchor' | 'coverage';
      occupancy: components['schemas']['Counts'];
      entered: components['schemas']['Counts'];
      exited: components['schemas']['Counts'];
      visits: {
        total: number;
        open: number;
      };
      /** @description of ended visits; p50 and p95 at most 1/64 above the exact value */
      dwell_ms: {
        count: number;
        p50: number | null;
        p95: number | null;
        max: number | null;
      };
      /** @description per alert label, whether it is raised */
      occupancy_alerts: {
        [key: string]: boolean;
      };
      coverage?: {
        fraction: number;
        active: boolean;
      };
    };
    LineSummary: {
      /** @constant */
      kind: 'line';
      id: string;
      name: string;
      version: number;
      in: components['schemas']['Counts'];
      out: components['schemas']['Counts'];
      in_total: number;
      out_total: number;
    };
    Analytics: {
      task_id: string;
      rules_version: number;
      /** @description the last frame evaluated (its seq in the task's frames) */
      as_of_seq: number | null;
      /** @description that frame's media time */
      media_ms: number | null;
      rules: (components['schemas']['ZoneSummary'] | components['schemas']['LineSummary'])[];
    };
    /** @description `id` is the first 32 hex characters of sha256 over (task id, rule id, rule version, key, kind, seq): the same rules over the same frames give the same ids (docs/ANALYTICS.md, "Events and their ids"). `has_snapshot` with `snapshot_path` (true) or `snapshot_reason` (false) says whether the event's picture can be read. */
    AnalyticsEvent: {
      id: string;
      /** @enum {string} */
      kind:
        | 'zone.entered'
        | 'zone.exited'
        | 'zone.dwell_exceeded'
        | 'zone.occupancy_exceeded'
        | 'zone.occupancy_cleared'
        | 'line.crossed';
      task_id: string;
      rule_id: string;
      rule_version: number;
      /** @description the frame the event was decided on */
      seq: number;
      media_ms: number;
      visit_id?: string;
      track_id?: string;
      label?: string;
      dwell_ms?: number;
      /** @enum {string} */
      direction?: 'in' | 'out';
      count?: number;
      threshold?: number;
      coverage?: number;
      /** @enum {string} */
      reason?: 'exited' | 'lost' | 'rule_changed' | 'rule_removed';
      /** @description whether the picture of the frame the event was decided on was kept (docs/EVIDENCE.md); read it at `snapshot_path` */
      has_snapshot: boolean;
      /** @description only when `has_snapshot` is true: `/v1/vision/tasks/{task_id}/events/{event_id}/snapshot`, relative to the API's base URL */
      snapshot_path?: string;
      snapshot_reason?: components['schemas']['SnapshotReason'];
    };
    /**
     * @description only when there is no picture: `frame_gone`, the frame had already left inference's ring of recent frames (or its job was gone) when results asked for it; `capture_failed`, inference or the object store failed or did not answer in time; `not_captured`, no picture was ever taken for this id (an event of a replay under other rules, an event decided before pictures were kept, or a track with no frame that passes the best-shot size rule yet)
     * @enum {string}
     */
    SnapshotReason: 'frame_gone' | 'capture_failed' | 'not_captured';
    /** @description The `data` of a `vision.zone.*` or `vision.line.crossed` webhook event: the AnalyticsEvent itself (its `id` is also the CloudEvents `id` and the delivery's webhook-id). */
    AnalyticsWebhookData: components['schemas']['AnalyticsEvent'];
    ImageZoneCounts: {
      zone_id: string;
      counts: components['schemas']['Counts'];
      coverage?: {
        fraction: number;
        triggered: boolean;
      };
    };
    Scene: {
      scene_code: components['schemas']['SceneCode'];
      name: string;
      enabled: boolean;
      /** @description why the scene is disabled */
      reason?: string;
      /** @description false while video tasks cannot run (the decoder preflight failed); creating one answers 503 OP-SYS-UNAVAILABLE */
      video_enabled?: boolean;
      /** @description why video tasks are unavailable */
      video_reason?: string;
      /** @description what serves the scene (ONNX model */
      engine: string;
      labels: string[];
      lower_bound: number;
      default_business_threshold: number;
    };
    QuotaKind: {
      limit: number;
      used: number;
      held?: number;
      remaining: number;
      /** @description the UTC+8 calendar day, YYYY-MM-DD */
      day?: string;
      /** Format: date-time */
      resets_at: string;
    };
    ErrorEnvelope: {
      error: {
        /** @enum {string} */
        code:
          | 'OP-AUTH-REQUIRED'
          | 'OP-TASK-REQUEST-INVALID'
          | 'OP-TASK-SCENE-UNAVAILABLE'
          | 'OP-QUOTA-DAILY-EXHAUSTED'
          | 'OP-QUOTA-RATE-LIMITED'
          | 'OP-TASK-UPSTREAM-DOWN'
          | 'OP-TASK-BREAKER-OPEN'
          | 'OP-SYS-UNAVAILABLE'
          | 'OP-TASK-NOT-STOPPABLE'
          | 'OP-TASK-NO-PICTURE'
          | 'OP-TASK-NO-SNAPSHOT'
          | 'OP-TASK-ENDED'
          | 'OP-NOT-FOUND'
          | 'OP-METHOD-NOT-ALLOWED'
          | 'OP-SYS-INTERNAL';
        message: string;
        /** @description more about the error; `reason` is one of a closed vocabulary (docs/API.md, "Error reasons") */
        details?: {
          /** @description OP-TASK-NO-SNAPSHOT only, why there is no picture */
          snapshot_reason?: components['schemas']['SnapshotReason'];
          /** @enum {string} */
          reason?:
            | 'unknown_field'
            | 'invalid_field'
            | 'missing_field'
            | 'malformed_body'
            | 'malformed_json'
            | 'unsupported_encoding'
            | 'body_too_large'
            | 'body_truncated'
            | 'upload_stalled'
            | 'malformed_request'
            | 'invalid_path'
            | 'method_not_allowed'
            | 'range_not_satisfiable'
            | 'invalid_query'
            | 'invalid_cursor'
            | 'invalid_limit'
            | 'invalid_min_score'
            | 'too_many_ids'
            | 'rule_history_full'
            | 'idempotency_key'
            | 'idempotency_mismatch'
            | 'in_progress'
            | 'not_multipart'
            | 'malformed_multipart'
            | 'duplicate_field'
            | 'field_too_large'
            | 'too_many_fields'
            | 'too_many_parts'
            | 'too_many_files'
            | 'file_missing'
            | 'file_too_large'
            | 'unsupported_type'
            | 'too_many_pixels'
            | 'stream_url_invalid'
            | 'stream_unreachable'
            | 'unknown_scene'
            | 'scene_disabled'
            | 'active_tasks'
            | 'fair_share'
            | 'queue_full'
            | 'charge_id_conflict'
            | 'hold_id_conflict'
            | 'hold_already_settled'
            | 'units_exceed_hold'
            | 'hold_expired'
            | 'lease_id_conflict'
            | 'lease_ended'
            | 'maintenance'
            | 'breaker_open'
            | 'decoder_unavailable'
            | 'probe_unavailable'
            | 'overloaded'
            | 'deadline_exceeded'
            | 'webhook_url_invalid'
            | 'webhook_unreachable'
            | 'webhook_verification_failed'
            | 'too_many_webhooks'
            | 'delivery_not_dead'
            | 'webhook_disabled'
            | 'not_resolving'
            | 'task_id_taken';
        };
        request_id: string;
      };
    };
  };
  responses: {
    /**
     * @description OP-TASK-REQUEST-INVALID: a body that is not the register shape (`unknown_field`, `invalid_field`,
     *     `malformed_body`), a refused URL (`webhook_url_invalid`), a host that does not resolve
     *     (`webhook_unreachable`), a verification not answered 2xx (`webhook_verification_failed`), too many
     *     endpoints (`too_many_webhooks`), a redelivery of a delivery that is not dead (`delivery_not_dead`) or on
     *     a disabled endpoint (`webhook_disabled`).
     */
    InvalidWebhookRequest: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /**
     * @description OP-TASK-REQUEST-INVALID (`details.reason` names the problem: idempotency key missing or not a UUID,
     *     unknown or repeated field, file type or size, image count, invalid or unreachable `stream_url`
     *     (`stream_url_invalid`, `stream_unreachable`), malformed body, same key with another request), or
     *     OP-TASK-SCENE-UNAVAILABLE (`scene_code` unknown or disabled).
     */
    InvalidTaskRequest: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        /**
         * @example {
         *       "error": {
         *         "code": "OP-TASK-REQUEST-INVALID",
         *         "message": "stream_url is not reachable",
         *         "details": {
         *           "reason": "stream_unreachable"
         *         },
         *         "request_id": "5b8e1f0c-6a2d-4c3b-8e9f-7a6b5c4d3e2f"
         *       }
         *     }
         */
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /**
     * @description OP-TASK-REQUEST-INVALID: a rule set that is not valid (docs/ANALYTICS.md, "Limits" and "Validation
     *     errors"): `unknown_field` with `details.fields`, or `invalid_field` with `details.field` naming the
     *     first problem (`zones.0.polygon` for a self-intersecting or zero-area polygon or a point outside
     *     [0, 1], `lines.1.end` for a degenerate line, `zones` for more than 20 rules); a body that is not JSON
     *     (`malformed_json`).
     */
    InvalidRules: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        /**
         * @example {
         *       "error": {
         *         "code": "OP-TASK-REQUEST-INVALID",
         *         "message": "Invalid field zones.0.polygon: must not intersect itself or repeat a vertex",
         *         "details": {
         *           "reason": "invalid_field",
         *           "field": "zones.0.polygon"
         *         },
         *         "request_id": "5b8e1f0c-6a2d-4c3b-8e9f-7a6b5c4d3e2f"
         *       }
         *     }
         */
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /**
     * @description OP-TASK-REQUEST-INVALID: a query parameter out of range, repeated, unknown (`unknown_field`) or a
     *     cursor that is not one this API gave out (`invalid_cursor`); a request target with malformed
     *     percent-encoding or control characters (`invalid_path`, `invalid_query`).
     */
    InvalidQuery: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /** @description OP-AUTH-REQUIRED, the `Authorization: Bearer <API_KEY>` header is missing or the key is not valid */
    Unauthorized: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        /**
         * @example {
         *       "error": {
         *         "code": "OP-AUTH-REQUIRED",
         *         "message": "A valid API key is required: Authorization: Bearer <API_KEY>",
         *         "request_id": "5b8e1f0c-6a2d-4c3b-8e9f-7a6b5c4d3e2f"
         *       }
         *     }
         */
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /** @description OP-NOT-FOUND, no such task for this key's subject (never present, another subject's, or expired) */
    NotFound: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /** @description OP-NOT-FOUND: no such task for this key's subject (never present, another subject's, or expired) or no such event in it, alike; OP-TASK-NO-SNAPSHOT: the event has no picture, or the track no best shot, `details.snapshot_reason` says why */
    NoSnapshot: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /**
     * @description OP-QUOTA-RATE-LIMITED (`details.limit` = `qps` or `concurrency` per subject, or the active video
     *     tasks of the subject) or OP-QUOTA-DAILY-EXHAUSTED (resets at 00:00 UTC+8). `Retry-After` says
     *     when to retry.
     */
    TooManyRequests: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        'Retry-After': components['headers']['RetryAfter'];
        'RateLimit-Policy': components['headers']['RateLimitPolicy'];
        RateLimit: components['headers']['RateLimit'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /**
     * @description OP-TASK-UPSTREAM-DOWN (the inference backend is temporarily unavailable or at capacity),
     *     OP-TASK-BREAKER-OPEN (new tasks are not accepted for now) or OP-SYS-UNAVAILABLE (a dependency
     *     such as object storage or the database cannot be reached). Retry later.
     */
    Unavailable: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        'Retry-After': components['headers']['RetryAfter'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['ErrorEnvelope'];
      };
    };
    /** @description First creation */
    TaskCreated: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        'RateLimit-Policy': components['headers']['RateLimitPolicy'];
        RateLimit: components['headers']['RateLimit'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['Task'];
      };
    };
    /** @description Idempotent replay; the original task with its current status */
    TaskReplayed: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['Task'];
      };
    };
    /** @description Submission outcome unknown (status resolving); poll the task, do not resend with a new key */
    TaskResolving: {
      headers: {
        'X-Request-Id': components['headers']['RequestId'];
        [name: string]: unknown;
      };
      content: {
        'application/json': components['schemas']['Task'];
      };
    };
  };
  parameters: {
    /** @description How long the caller will wait for the answer, in milliseconds (100 to 600000). A value below 100 is refused with 400 `invalid_field` (no call can be answered that fast). A call that cannot start within it is refused at once with 503 `deadline_exceeded` or `overloaded` (nothing charged); the deadline travels with the internal calls, and work whose deadline passed is dropped before inference (docs/OVERLOAD.md) */
    RequestTimeout: number;
    /**
     * @description A UUID (8-4-4-4-12 hex digits) chosen by the caller; a retry sends the same one
     * @example 3f1c2a9e-8b7d-4c52-9f0e-1a2b3c4d5e6f
     */
    IdempotencyKey: string;
    /**
     * @description The `task_id` of a task of this key's subject; any other value answers 404
     * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
     */
    TaskId: string;
    /** @description an event's `id`; anything but 32 lowercase hex characters answers 400 `invalid_field` */
    EventId: string;
    /** @description a `track_id` of the task's result frames; anything but 1-64 characters of `A-Z a-z 0-9 . _ : -` answers 400 `invalid_field` */
    TrackId: string;
    /** @description `true`: only the object's box (a zone-wide alert: the zone's bounding box), cut from the frame */
    Crop: 'true' | 'false';
    /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
    EndpointId: string;
    /** @description the delivery's webhook-id (the CloudEvents `id` of its event) */
    DeliveryId: string;
  };
  requestBodies: never;
  headers: {
    /** @description The request id (accepted from the client's X-Request-Id or generated) */
    RequestId: string;
    /** @description Seconds to wait before retrying (429 and 503 answers) */
    RetryAfter: string;
    /** @description The daily video task quota, IETF RateLimit header fields: `"video-daily";q=<limit>;w=86400` */
    RateLimitPolicy: string;
    /** @description What is left of it: `"video-daily";r=<remaining>;t=<seconds until reset>` */
    RateLimit: string;
  };
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  listTasks: {
    parameters: {
      query?: {
        /** @description the `next_cursor` of the previous page; empty or absent for the first page */
        cursor?: string;
        limit?: number;
        status?: components['schemas']['TaskStatus'];
        kind?: 'video' | 'image';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of tasks */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            items: components['schemas']['Task'][];
            /** @description empty when there are no more tasks */
            next_cursor: string;
          };
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  createStreamTask: {
    parameters: {
      query?: never;
      header: {
        /**
         * @description A UUID (8-4-4-4-12 hex digits) chosen by the caller; a retry sends the same one
         * @example 3f1c2a9e-8b7d-4c52-9f0e-1a2b3c4d5e6f
         */
        'Idempotency-Key': components['parameters']['IdempotencyKey'];
        /** @description How long the caller will wait for the answer, in milliseconds (100 to 600000). A value below 100 is refused with 400 `invalid_field` (no call can be answered that fast). A call that cannot start within it is refused at once with 503 `deadline_exceeded` or `overloaded` (nothing charged); the deadline travels with the internal calls, and work whose deadline passed is dropped before inference (docs/OVERLOAD.md) */
        'X-Request-Timeout-Ms'?: components['parameters']['RequestTimeout'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "scene_code": "person_vehicle",
         *       "stream_url": "rtsp://camera.example.net:554/live/1"
         *     }
         */
        'application/json': {
          scene_code: components['schemas']['SceneCode'];
          /**
           * @description http, https, rtsp or rtmp URL of a stream the service can reach; may carry user
           *     information (never echoed back). Without whitespace or control characters.
           */
          stream_url: string;
          /** @description places to watch (docs/ANALYTICS.md); zones and lines together at most 20 */
          zones?: components['schemas']['Zone'][];
          /** @description segments to count crossings of (docs/ANALYTICS.md) */
          lines?: components['schemas']['Line'][];
        };
      };
    };
    responses: {
      200: components['responses']['TaskReplayed'];
      201: components['responses']['TaskCreated'];
      202: components['responses']['TaskResolving'];
      400: components['responses']['InvalidTaskRequest'];
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  createFileTask: {
    parameters: {
      query?: never;
      header: {
        /**
         * @description A UUID (8-4-4-4-12 hex digits) chosen by the caller; a retry sends the same one
         * @example 3f1c2a9e-8b7d-4c52-9f0e-1a2b3c4d5e6f
         */
        'Idempotency-Key': components['parameters']['IdempotencyKey'];
        /** @description How long the caller will wait for the answer, in milliseconds (100 to 600000). A value below 100 is refused with 400 `invalid_field` (no call can be answered that fast). A call that cannot start within it is refused at once with 503 `deadline_exceeded` or `overloaded` (nothing charged); the deadline travels with the internal calls, and work whose deadline passed is dropped before inference (docs/OVERLOAD.md) */
        'X-Request-Timeout-Ms'?: components['parameters']['RequestTimeout'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'multipart/form-data': {
          scene_code: components['schemas']['SceneCode'];
          /**
           * Format: binary
           * @description MP4 or MOV (recognised by content, not by name or declared type), at most 512 MB
           */
          file: string;
          /** @description a JSON array of Zone (docs/ANALYTICS.md), as one text field before the file; validated as the stream body's `zones` */
          zones?: string;
          /** @description a JSON array of Line, as one text field before the file */
          lines?: string;
        };
      };
    };
    responses: {
      200: components['responses']['TaskReplayed'];
      201: components['responses']['TaskCreated'];
      202: components['responses']['TaskResolving'];
      400: components['responses']['InvalidTaskRequest'];
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getTask: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The task */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Task'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  stopTask: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The task, `stopped` once the backend confirmed, else `stopping` (the stop persists) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Task'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      /** @description OP-TASK-NOT-STOPPABLE, the task has already ended (or is an image call record) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelope'];
        };
      };
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getTaskVideo: {
    parameters: {
      query?: never;
      header?: {
        /** @example bytes=0-1023 */
        Range?: string;
        'If-Range'?: string;
      };
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The whole file (`video/mp4` or `video/quicktime`, told by content) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          'Accept-Ranges'?: 'bytes';
          ETag?: string;
          [name: string]: unknown;
        };
        content: {
          'video/mp4': string;
          'video/quicktime': string;
        };
      };
      /** @description The requested byte range */
      206: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          /** @example bytes 0-1023/148886 */
          'Content-Range'?: string;
          [name: string]: unknown;
        };
        content: {
          'video/mp4': string;
          'video/quicktime': string;
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      /** @description The range starts past the end of the file; `Content-Range: bytes *\/<size>`; OP-TASK-REQUEST-INVALID with `details.reason` = `range_not_satisfiable` */
      416: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelope'];
        };
      };
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  headTaskVideo: {
    parameters: {
      query?: never;
      header?: {
        Range?: string;
      };
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description As GET */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description As GET */
      206: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Malformed task id or request target (invalid_path) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Invalid key */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Not the caller's file task */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Range past the end */
      416: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description As GET (the gateway's rate limit and quota apply to HEAD too), without a body */
      429: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          'Retry-After': components['headers']['RetryAfter'];
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  listResults: {
    parameters: {
      query?: {
        /** @description opaque paging token, the `next_cursor` of the previous page of this task; empty or absent for the first page */
        cursor?: string;
        limit?: number;
        /** @description lower bound of confidence from 0 to 1, as a JSON number (`0.5`, `1e-1`) */
        min_score?: number;
      };
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of frames */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            items: components['schemas']['Frame'][];
            /** @description empty only when the task has ended and every frame was returned (of a task with zones or lines: every frame evaluated) */
            next_cursor: string;
          };
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  streamResults: {
    parameters: {
      query?: {
        /** @description where to start, as on the page endpoint */
        cursor?: string;
        /** @description frames read per round */
        limit?: number;
        /** @description lower bound of confidence from 0 to 1, as on the page endpoint */
        min_score?: number;
      };
      header?: {
        /** @description the `id` of the last event received; wins over `cursor` */
        'Last-Event-ID'?: string;
      };
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An event stream of `frame` events, heartbeats and a final `end` */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': {
            /** @enum {string} */
            event: 'frame' | 'end';
            /** @description JSON: the result frame for `frame`, `{}` for `end` */
            data: string;
            /** @description the cursor after this frame: a Last-Event-ID */
            id?: string;
          };
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getTaskSnapshot: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The picture */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          'Cache-Control'?: 'no-store';
          /** @description media time of the frame, as the result frames' `frame_time_ms` */
          'X-Frame-Time-Ms'?: number;
          [name: string]: unknown;
        };
        content: {
          'image/jpeg': string;
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      /** @description OP-TASK-NO-PICTURE, the task is not running or its decoder has delivered no frame yet */
      409: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelope'];
        };
      };
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getTaskRules: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The rules in force (every default filled in) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TaskRules'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  replaceTaskRules: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['RuleSet'];
      };
    };
    responses: {
      /** @description The rules in force after the request */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TaskRules'];
        };
      };
      400: components['responses']['InvalidRules'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      /** @description OP-TASK-ENDED, the task has ended (succeeded, failed, stopped or refunded); its rules are final */
      409: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelope'];
        };
      };
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getTaskAnalytics: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The summary of the rules in force; `as_of_seq` null and every count empty before results evaluated a frame (or when the task has no rules) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Analytics'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  listTaskEvents: {
    parameters: {
      query?: {
        /** @description the `next_cursor` of the previous page of this task's events; empty or absent for the first page */
        cursor?: string;
        limit?: number;
      };
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of events */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            items: components['schemas']['AnalyticsEvent'][];
            /** @description empty only when the task has ended, its every frame was evaluated and every event returned */
            next_cursor: string;
          };
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  streamTaskEvents: {
    parameters: {
      query?: {
        /** @description where to start, as on the page endpoint */
        cursor?: string;
        /** @description events read per round */
        limit?: number;
      };
      header?: {
        /** @description the `id` of the last event received; wins over `cursor` */
        'Last-Event-ID'?: string;
      };
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An event stream of `zone_event` events, heartbeats and a final `end` */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': {
            /** @enum {string} */
            event: 'zone_event' | 'end';
            /** @description JSON: the AnalyticsEvent for `zone_event`, `{}` for `end` */
            data: string;
            /** @description the events cursor after this event: a Last-Event-ID */
            id?: string;
          };
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getEventSnapshot: {
    parameters: {
      query?: {
        /** @description `true`: only the object's box (a zone-wide alert: the zone's bounding box), cut from the frame */
        crop?: components['parameters']['Crop'];
      };
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
        /** @description an event's `id`; anything but 32 lowercase hex characters answers 400 `invalid_field` */
        event_id: components['parameters']['EventId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The picture */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          'Cache-Control'?: 'private, max-age=3600';
          /** @description the picture's digest, quoted */
          ETag?: string;
          /** @description the frame's `seq` */
          'X-Frame-Seq'?: number;
          /** @description the frame's media time */
          'X-Frame-Time-Ms'?: number;
          [name: string]: unknown;
        };
        content: {
          'image/jpeg': string;
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NoSnapshot'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getTrackBestShot: {
    parameters: {
      query?: {
        /** @description `true`: only the object's box (a zone-wide alert: the zone's bounding box), cut from the frame */
        crop?: components['parameters']['Crop'];
      };
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
        /** @description a `track_id` of the task's result frames; anything but 1-64 characters of `A-Z a-z 0-9 . _ : -` answers 400 `invalid_field` */
        track_id: components['parameters']['TrackId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The picture */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          'Cache-Control'?: 'no-cache';
          /** @description the picture's digest, quoted */
          ETag?: string;
          /** @description the frame's `seq` */
          'X-Frame-Seq'?: number;
          /** @description the frame's media time */
          'X-Frame-Time-Ms'?: number;
          /** @description what the box met: `met` the size rule; `too_small` or `at_edge` the fallback of a track none of whose boxes passed it (its best-scoring box) */
          'X-Best-Shot-Rule'?: 'met' | 'too_small' | 'at_edge';
          [name: string]: unknown;
        };
        content: {
          'image/jpeg': string;
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NoSnapshot'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  replayTaskAnalytics: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The `task_id` of a task of this key's subject; any other value answers 404
         * @example 7d9f1c3e-2b4a-4e8f-9a1b-0c2d3e4f5a6b
         */
        task_id: components['parameters']['TaskId'];
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          zones?: components['schemas']['Zone'][];
          lines?: components['schemas']['Line'][];
          /** @default 1000 */
          max_events?: number;
          /** @description frames this request evaluates at most; default and maximum RESULTS_REPLAY_MAX_FRAMES (10000 unless configured) */
          max_frames?: number;
          /** @description the `next_cursor` of the previous replay of the same rules */
          cursor?: string;
        };
      };
    };
    responses: {
      /** @description The analytics and events of the rule set over the stored frames */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            analytics: components['schemas']['Analytics'];
            events: components['schemas']['AnalyticsEvent'][];
            /** @description every event this request's frames gave */
            events_total: number;
            /** @description stored frames this request evaluated */
            frames: number;
            /** @description where the next request of the same rules goes on; empty once every stored frame is in */
            next_cursor: string;
          };
        };
      };
      400: components['responses']['InvalidRules'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  createImageDetection: {
    parameters: {
      query?: never;
      header: {
        /**
         * @description A UUID (8-4-4-4-12 hex digits) chosen by the caller; a retry sends the same one
         * @example 3f1c2a9e-8b7d-4c52-9f0e-1a2b3c4d5e6f
         */
        'Idempotency-Key': components['parameters']['IdempotencyKey'];
        /** @description How long the caller will wait for the answer, in milliseconds (100 to 600000). A value below 100 is refused with 400 `invalid_field` (no call can be answered that fast). A call that cannot start within it is refused at once with 503 `deadline_exceeded` or `overloaded` (nothing charged); the deadline travels with the internal calls, and work whose deadline passed is dropped before inference (docs/OVERLOAD.md) */
        'X-Request-Timeout-Ms'?: components['parameters']['RequestTimeout'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'multipart/form-data': {
          scene_code?: components['schemas']['SceneCode'];
          /** @description JPG, PNG or WEBP (recognised by content), at most 8 MiB each, 81 MiB for the whole body */
          files: string[];
          /** @description a JSON array of Zone (docs/ANALYTICS.md, "Images"); each image's result then counts, per zone, the objects in it. Hysteresis, dwell and occupancy alerts need time and do not apply. */
          zones?: string;
        };
      };
    };
    responses: {
      /** @description Idempotent replay (`replayed` = true) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ImageDetection'];
        };
      };
      /** @description Processed call */
      201: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ImageDetection'];
        };
      };
      400: components['responses']['InvalidTaskRequest'];
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  listScenes: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Scene list */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            scenes: components['schemas']['Scene'][];
          };
        };
      };
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getQuota: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Quota per kind */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            video_tasks: components['schemas']['QuotaKind'];
            images: components['schemas']['QuotaKind'];
          };
        };
      };
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  listWebhooks: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The endpoints, oldest first */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            items: components['schemas']['WebhookEndpoint'][];
          };
        };
      };
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  createWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @description http or https, no user information, no fragment; must resolve to an address the egress policy allows */
          url: string;
          event_types: components['schemas']['WebhookEventType'][];
          /** @description no control characters */
          description?: string;
        };
      };
    };
    responses: {
      /** @description The endpoint, with its signing secret (shown this once) */
      201: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookEndpointWithSecret'];
        };
      };
      400: components['responses']['InvalidWebhookRequest'];
      401: components['responses']['Unauthorized'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The endpoint */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookEndpoint'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  deleteWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      204: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content?: never;
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  rotateWebhookSecret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The endpoint with its new secret (shown this once) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookEndpointWithSecret'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  revokePreviousWebhookSecret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The endpoint, without previous_secret_expires_at; deliveries from now on carry one signature, by the current secret */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookEndpoint'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  listWebhookDeliveries: {
    parameters: {
      query?: {
        status?: 'pending' | 'delivered' | 'dead';
        limit?: number;
        /** @description opaque: the next_cursor of the previous page */
        cursor?: string;
      };
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of deliveries with their attempts */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            items: components['schemas']['WebhookDelivery'][];
            /** @description empty on the last page */
            next_cursor: string;
          };
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getWebhookDelivery: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
        /** @description the delivery's webhook-id (the CloudEvents `id` of its event) */
        delivery_id: components['parameters']['DeliveryId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The delivery */
      200: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDelivery'];
        };
      };
      400: components['responses']['InvalidQuery'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  redeliverWebhook: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description The `id` of one of the subject's endpoints; any other value of this shape answers 404 */
        endpoint_id: components['parameters']['EndpointId'];
        /** @description the delivery's webhook-id (the CloudEvents `id` of its event) */
        delivery_id: components['parameters']['DeliveryId'];
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The delivery, pending again */
      202: {
        headers: {
          'X-Request-Id': components['headers']['RequestId'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDelivery'];
        };
      };
      400: components['responses']['InvalidWebhookRequest'];
      401: components['responses']['Unauthorized'];
      404: components['responses']['NotFound'];
      429: components['responses']['TooManyRequests'];
      503: components['responses']['Unavailable'];
    };
  };
  getOpenApi: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The OpenAPI document */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': Record<string, never>;
        };
      };
    };
  };
}
