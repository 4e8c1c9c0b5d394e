/**
 * Zones and lines through the SDK against the standalone stack: rules on create, the rules in force and their
 * replacement, the events page by page and over the live stream, their pictures and the tracks' best shots, the
 * analytics, the replay, and image detections with zones.
 */
import path from 'node:path';
import sharp from 'sharp';
import { CURB, LEFT_LANE, PARKING_LOT } from '../../../test/helpers/places';
import { MEDIA, startStack, type TestStack } from '../../../test/helpers/stack';
import { VisionApiError, VisionClient, type AnalyticsEvent, type LineSummary, type ZoneInput } from '../src';

const KEY = 'sdk-places-key-0123456789';
const CLIP = PARKING_LOT;
/** 80 s of video: a task that is still running while a test changes its rules. */
const LONG_CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv.mp4');
const ZONES: ZoneInput[] = [{ ...LEFT_LANE, name: 'left lane' }];
const LINES = [CURB];

describe('zones and lines through the SDK', () => {
  let stack: TestStack;
  let client: VisionClient;
  /** The file task of the first case, its events read to the end. */
  let ended: { taskId: string; events: AnalyticsEvent[] } | undefined;
  beforeAll(async () => {
    stack = await startStack({
      keys: `${KEY}:sdk-places`,
      env: { TASKS_POLL_INTERVAL_MS: '300', RESULTS_STREAM_POLL_MS: '100' },
    });
    client = new VisionClient({ baseUrl: stack.url, apiKey: KEY, retry: { minDelayMs: 50 } });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('a file task with rules: events pages and the live stream agree, analytics count them, replay repeats them', async () => {
    const created = await client.createFileTask({
      file: CLIP,
      scene: 'person_vehicle',
      zones: ZONES,
      lines: LINES,
    });
    expect(created.httpStatus).toBe(201);
    const taskId = created.task.task_id;
    // Followed from the start, while the task runs, until the stream's `end`.
    const followed: AnalyticsEvent[] = [];
    const following = (async () => {
      for await (const e of client.places.followEvents(taskId, { reconnectDelayMs: 100 })) followed.push(e);
    })();

    const rules = await client.places.getRules(taskId);
    expect(rules.rules_version).toBe(1);
    expect(rules.zones[0]).toMatchObject({ id: 'lane', anchor: 'bottom_center', min_score: 0 });
    expect(rules.lines.map((l) => l.id)).toEqual(['curb']);

    const paged: AnalyticsEvent[] = [];
    for await (const e of client.places.events(taskId, { limit: 5, pollIntervalMs: 200 })) paged.push(e);
    await following;
    expect(paged.length).toBeGreaterThan(0);
    expect(followed).toEqual(paged);
    const crossings = paged.filter((e) => e.kind === 'line.crossed');
    expect(crossings.length).toBeGreaterThanOrEqual(1);
    expect(paged.some((e) => e.kind === 'zone.entered')).toBe(true);
    ended = { taskId, events: paged };

    const analytics = await client.places.analytics(taskId);
    expect(analytics.rules_version).toBe(1);
    const curb = analytics.rules.find((r): r is LineSummary => r.kind === 'line' && r.id === 'curb');
    expect(curb?.in_total).toBe(crossings.filter((e) => e.direction === 'in').length);
    expect(curb?.out_total).toBe(crossings.filter((e) => e.direction === 'out').length);

    const replay = await client.places.replay(taskId, { zones: ZONES, lines: LINES });
    expect(replay.events).toEqual(paged);
    expect(replay.events_total).toBe(paged.length);
    expect(replay.analytics.rules).toEqual(analytics.rules);
    const firstOnly = await client.places.replay(taskId, { zones: ZONES, lines: LINES }, { maxEvents: 1 });
    expect(firstOnly.events).toEqual(paged.slice(0, 1));

    // A new rule set is a new version; the same set again changes nothing.
    const wider = {
      zones: [
        {
          ...ZONES[0],
          polygon: [
            [0, 0],
            [0.5, 0],
            [0.5, 1],
            [0, 1],
          ],
        },
      ],
      lines: LINES,
    };
    // The task has ended: its rules are final.
    await expect(client.places.replaceRules(taskId, wider)).rejects.toMatchObject({
      status: 409,
      code: 'OP-TASK-ENDED',
    });
    // A task still running takes new rules as a new version; the same rules again keep it.
    const running = await client.createFileTask({
      file: LONG_CLIP,
      scene: 'person_vehicle',
      zones: ZONES,
      lines: LINES,
    });
    const runningId = running.task.task_id;
    expect((await client.places.replaceRules(runningId, wider)).rules_version).toBe(2);
    const again = await client.places.replaceRules(runningId, wider);
    expect(again.rules_version).toBe(2);
    expect(again.zones[0].polygon).toEqual(wider.zones[0].polygon);
    expect((await client.places.getRules(runningId)).rules_version).toBe(2);
    await client.stopTask(runningId);
  }, 300_000);

  it("reads each event's picture and crop as JPEG bytes of the event's frame, and a track's best shot", async () => {
    if (!ended) throw new Error('the first case did not finish its task');
    const { taskId, events } = ended;
    // A file task's frames are all there to picture: every line crossing has one.
    const crossings = events.filter((e) => e.kind === 'line.crossed');
    expect(crossings.map((e) => e.has_snapshot)).toEqual(crossings.map(() => true));
    for (const e of events.filter((x) => x.has_snapshot)) {
      expect(e.snapshot_path).toBe(`/v1/vision/tasks/${taskId}/events/${e.id}/snapshot`);
      const whole = await client.places.eventSnapshot(taskId, e.id);
      expect([whole.contentType, whole.seq, whole.frameTimeMs]).toEqual([
        'image/jpeg',
        e.seq,
        Math.round(e.media_ms),
      ]);
      const frame = await sharp(whole.bytes).metadata();
      expect(frame.format).toBe('jpeg');
      // The same bytes on every read.
      expect((await client.places.eventSnapshot(taskId, e.id)).bytes).toEqual(whole.bytes);
      const crop = await sharp(
        (await client.places.eventSnapshot(taskId, e.id, { crop: true })).bytes,
      ).metadata();
      expect(crop.format).toBe('jpeg');
      expect(crop.width! * crop.height!).toBeLessThan(frame.width! * frame.height!);
    }
    // The result frames' tracked objects name their track's best shot.
    const tracked = (await client.resultPage(taskId, { limit: 500 })).items
      .flatMap((f) => f.objects)
      .find((o) => o.track_id === crossings[0].track_id && o.best_shot_path);
    expect(tracked?.best_shot_path).toBe(`/v1/vision/tasks/${taskId}/tracks/${tracked?.track_id}/best_shot`);
    const best = await client.places.bestShot(taskId, tracked!.track_id!, { crop: true });
    expect((await sharp(best.bytes).metadata()).format).toBe('jpeg');
    // The documented errors, typed.
    await expect(client.places.eventSnapshot(taskId, 'f'.repeat(32))).rejects.toMatchObject({
      status: 404,
      code: 'OP-NOT-FOUND',
    });
    await expect(client.places.eventSnapshot(taskId, 'not-an-event-id')).rejects.toMatchObject({
      status: 400,
      reason: 'invalid_field',
    });
    await expect(client.places.bestShot(taskId, 'no-such-track')).rejects.toMatchObject({
      status: 404,
      code: 'OP-TASK-NO-SNAPSHOT',
      details: { snapshot_reason: 'not_captured' },
    });
  }, 120_000);

  it('refused rules throw the typed error with the field at fault', async () => {
    const bowtie = [
      {
        id: 'z',
        polygon: [
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 1],
        ],
      },
    ];
    const err = await client
      .createFileTask({ file: CLIP, scene: 'person_vehicle', zones: bowtie })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VisionApiError);
    expect((err as VisionApiError).status).toBe(400);
    expect((err as VisionApiError).details).toMatchObject({
      reason: 'invalid_field',
      field: 'zones.0.polygon',
    });
    const missing = await client.places.getRules('no-such-task').catch((e: unknown) => e);
    expect((missing as VisionApiError).status).toBe(404);
  }, 60_000);

  it('image detections with zones answer the counts per zone of each image', async () => {
    const frame = {
      id: 'frame',
      polygon: [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
      ],
    };
    const r = await client.detectImages([path.join(MEDIA, 'images', 'street_bus_pedestrians_coco2006.jpg')], {
      scene: 'person_vehicle',
      zones: [frame],
    });
    const result = r.results[0];
    expect(result.status).toBe('succeeded');
    expect(result.zones).toEqual([
      { zone_id: 'frame', counts: expect.objectContaining({ '*': result.objects!.length }) },
    ]);
    expect(result.objects!.length).toBeGreaterThan(0);
  }, 60_000);

  it('a stream task sends its zones and lines in the create body', async () => {
    let sent: unknown;
    const recording = new VisionClient({
      baseUrl: 'http://vision.invalid',
      apiKey: KEY,
      fetch: async (req) => {
        sent = await req.json();
        return Response.json({ task_id: 't1', status: 'running' }, { status: 201 });
      },
    });
    await recording.createStreamTask({
      streamUrl: 'rtsp://camera.invalid/lot',
      scene: 'person_vehicle',
      zones: ZONES,
      lines: LINES,
    });
    expect(sent).toEqual({
      scene_code: 'person_vehicle',
      stream_url: 'rtsp://camera.invalid/lot',
      zones: ZONES,
      lines: LINES,
    });
  });
});
