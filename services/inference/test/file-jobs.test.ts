/** @jest-environment ./services/inference/test/support/onnx-environment.js */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { jobRequestSchema } from '../src/jobs/job-manager';
import { DEFAULT_TRACKER_OPTIONS } from '../src/tracking/tracker-options';
import { VIDEOS_DIR, startTestInference, type EndMsg, type TestInference } from './support/helpers';

let svc: TestInference;
beforeAll(async () => {
  svc = await startTestInference();
  for (const f of ['pedestrians_vtest_opencv_10s.mov', 'person_bicycle_car_parkinglot_intel.mp4'])
    await svc.store.put(`uploads/${f}`, createReadStream(path.join(VIDEOS_DIR, f)));
});
afterAll(() => svc.close());

describe('file jobs from the object store', () => {
  it('pedestrian clip: ordered frames with PTS times, stable person tracks, end, succeeded', async () => {
    const outcome = await svc.parts.jobs.submit({
      job_id: 'task-ped',
      scene_code: 'person_vehicle',
      source: { type: 'object', key: 'uploads/pedestrians_vtest_opencv_10s.mov' },
      sample_fps: 5,
      grant: 'grant-of-task-ped',
    });
    expect(outcome.outcome).toBe('accepted');
    const end = await svc.collector.waitForEnd('task-ped');
    // Tasks' grant for the job is on every message it publishes (results checks it).
    expect(svc.collector.messages('task-ped').every((m) => m.grant === 'grant-of-task-ped')).toBe(true);
    const msgs = svc.collector.messages('task-ped');
    const frames = svc.collector.frames('task-ped');
    expect(svc.collector.keyMismatches).toEqual([]);
    // 10.5 s at 5 fps -> about 52 frames, seq 0..n-1 without gaps, then the end.
    expect(frames.length).toBeGreaterThanOrEqual(48);
    expect(frames.length).toBeLessThanOrEqual(54);
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    expect(msgs[msgs.length - 1]).toBe(end);
    expect(end).toMatchObject({
      type: 'end',
      seq: frames.length,
      frames: frames.length,
      status: 'succeeded',
    });
    expect(end.event_id).toBe('task-ped:end');
    // PTS times: 0, 200, 400, ... ms
    frames.forEach((f, i) => expect(f.frame_time_ms).toBe(i * 200));
    for (const f of frames) {
      expect(f).toMatchObject({
        schema: 1,
        type: 'frame',
        task_id: 'task-ped',
        event_id: `task-ped:${f.seq}`,
      });
      expect(f.image).toEqual({ width: 480, height: 360 });
      expect(f.lower_bound).toBe(0.3);
    }
    // persons in (nearly) every frame; a person scored enough to start a track (newTrackScore) lacks a track id only
    // while its track is not confirmed yet: it gets one within its next few frames, so nearly every such person
    // carries one. Weaker ones carry one only on a confirmed track (the clip's signpost, taken for a person at
    // 0.42-0.52 in every frame, never gets one).
    expect(frames.filter((f) => f.objects.some((o) => o.label === 'person')).length).toBeGreaterThanOrEqual(
      frames.length - 2,
    );
    const objects = frames.flatMap((f) => f.objects);
    for (const o of objects) expect(['string', 'undefined']).toContain(typeof o.track_id);
    const persons = objects.filter(
      (o) => o.label === 'person' && o.score >= DEFAULT_TRACKER_OPTIONS.newTrackScore,
    );
    expect(persons.filter((o) => o.track_id !== undefined).length).toBeGreaterThanOrEqual(
      0.8 * persons.length,
    );

    // A person keeps one track_id over consecutive frames: some person track spans >= 10 consecutive frames.
    const runs = new Map<string, { last: number; run: number; best: number }>();
    for (const f of frames) {
      for (const o of f.objects.filter((x) => x.label === 'person' && x.track_id !== undefined)) {
        const r = runs.get(o.track_id) ?? { last: -2, run: 0, best: 0 };
        r.run = r.last === f.seq - 1 ? r.run + 1 : 1;
        r.last = f.seq;
        r.best = Math.max(r.best, r.run);
        runs.set(o.track_id, r);
      }
    }
    const best = Math.max(...[...runs.values()].map((r) => r.best));
    expect(best).toBeGreaterThanOrEqual(10);
    // and a long-lived track stays near the same place between consecutive frames
    const [longId] = [...runs.entries()].sort((a, b) => b[1].best - a[1].best)[0];
    const centers = frames.flatMap((f) => f.objects.filter((o) => o.track_id === longId).map((o) => o.bbox));
    for (let i = 1; i < centers.length; i++)
      expect(Math.abs(centers[i].cx - centers[i - 1].cx)).toBeLessThan(0.1);

    const job = svc.parts.jobs.get('task-ped');
    expect(job).toMatchObject({ status: 'succeeded', frames_published: frames.length });
    expect(job?.ended_at).toBeDefined();
  });

  it('parking-lot clip: a car is detected, frames ordered, succeeded; resubmission is a duplicate', async () => {
    const req = {
      job_id: 'task-park',
      scene_code: 'person_vehicle',
      source: { type: 'object' as const, key: 'uploads/person_bicycle_car_parkinglot_intel.mp4' },
    };
    expect((await svc.parts.jobs.submit(req)).outcome).toBe('accepted');
    expect((await svc.parts.jobs.submit(req)).outcome).toBe('duplicate');
    const end: EndMsg = await svc.collector.waitForEnd('task-park');
    const frames = svc.collector.frames('task-park');
    expect(end.status).toBe('succeeded');
    // 3.42 s at the default 5 fps -> 17 frames
    expect(frames.length).toBeGreaterThanOrEqual(16);
    expect(frames.length).toBeLessThanOrEqual(18);
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    expect(frames.every((f, i) => i === 0 || f.frame_time_ms > frames[i - 1].frame_time_ms)).toBe(true);
    expect(frames.some((f) => f.objects.some((o) => o.label === 'car'))).toBe(true);
    expect(frames[0].image).toEqual({ width: 480, height: 270 });
    expect((await svc.parts.jobs.submit(req)).outcome).toBe('duplicate');
  });

  it('rejects a missing object and an unknown scene', async () => {
    expect(
      await svc.parts.jobs.submit({
        job_id: 'task-missing',
        scene_code: 'ship',
        source: { type: 'object', key: 'uploads/nope.mp4' },
      }),
    ).toEqual({ outcome: 'rejected', reason: 'object not found' });
    const bad = await svc.parts.jobs.submit({
      job_id: 'task-bad-scene',
      scene_code: 'dogs',
      source: { type: 'object', key: 'uploads/person_bicycle_car_parkinglot_intel.mp4' },
    });
    expect(bad.outcome).toBe('rejected');
    expect(svc.parts.jobs.get('task-missing')).toBeUndefined();
  });

  it('a junk upload (a valid ftyp box, then noise) fails with a reason from the list, no path in it', async () => {
    const ftyp = Buffer.from('0000001c667479706d703432000000016d703432697363356d703431', 'hex');
    const noise = Buffer.alloc(64 * 1024, 0);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    await svc.store.put('videos/ab/junk-upload', Buffer.concat([ftyp, noise]));
    await svc.parts.jobs.submit({
      job_id: 'task-junk',
      scene_code: 'person_vehicle',
      source: { type: 'object', key: 'videos/ab/junk-upload' },
    });
    const end = await svc.collector.waitForEnd('task-junk');
    expect(end.status).toBe('failed');
    expect(end.reason).toMatch(/^(media_unreadable|no_video_frames): /);
    expect(end.reason).not.toMatch(/\/|junk-upload|objects|Invalid data/);
    expect((end.reason ?? '').length).toBeLessThanOrEqual(200);
  });

  it('stop ends a running job as stopped, with an end message', async () => {
    await svc.parts.jobs.submit({
      job_id: 'task-stop',
      scene_code: 'person_vehicle',
      source: { type: 'object', key: 'uploads/pedestrians_vtest_opencv_10s.mov' },
      sample_fps: 5,
    });
    await svc.collector.waitFor(() => svc.collector.frames('task-stop').length >= 2, 30_000, 'two frames');
    expect(svc.parts.jobs.stop('task-stop')?.status).toBe('stopped');
    const end = await svc.collector.waitForEnd('task-stop');
    expect(end.status).toBe('stopped');
    const frames = svc.collector.frames('task-stop');
    expect(end.seq).toBe(frames.length);
    expect(frames.length).toBeLessThan(45);
    expect(svc.parts.jobs.stop('task-stop')?.status).toBe('stopped');
  });

  it('a job started again at a first seq publishes its frames and end from that seq on', async () => {
    const first = 3 * 2 ** 28;
    await svc.parts.jobs.submit({
      job_id: 'task-again',
      scene_code: 'person_vehicle',
      source: { type: 'object', key: 'uploads/pedestrians_vtest_opencv_10s.mov' },
      sample_fps: 2,
      first_seq: first,
    });
    const end = await svc.collector.waitForEnd('task-again');
    const frames = svc.collector.frames('task-again');
    expect(frames.length).toBeGreaterThan(15);
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => first + i));
    for (const f of frames)
      expect([f.event_id, f.frame_id]).toEqual([`task-again:${f.seq}`, `task-again:${f.seq}`]);
    frames.forEach((f, i) => expect(f.frame_time_ms).toBe(i * 500)); // times are the video's, not the seq's
    expect(end).toMatchObject({
      seq: first + frames.length,
      frames: first + frames.length,
      status: 'succeeded',
    });
    expect(svc.parts.jobs.get('task-again')?.frames_published).toBe(frames.length);
    // Past the room left below 2^31 for a job's frames: refused as a bad request.
    const over = { job_id: 'task-over', scene_code: 'person_vehicle', source: { type: 'object', key: 'x' } };
    expect(() => jobRequestSchema.parse({ ...over, first_seq: 2 ** 31 - 2 ** 28 + 1 })).toThrow();
    expect(jobRequestSchema.parse({ ...over, first_seq: 2 ** 31 - 2 ** 28 }).first_seq).toBe(
      2 ** 31 - 2 ** 28,
    );
  });
});

describe('a backend shutting down', () => {
  it('ends its running jobs failed (backend_shutdown) and publishes no end message for them', async () => {
    const own = await startTestInference();
    try {
      await own.store.put(
        'uploads/ped.mov',
        createReadStream(path.join(VIDEOS_DIR, 'pedestrians_vtest_opencv_10s.mov')),
      );
      await own.parts.jobs.submit({
        job_id: 'task-shut',
        scene_code: 'person_vehicle',
        source: { type: 'object', key: 'uploads/ped.mov' },
        sample_fps: 1,
      });
      await own.collector.waitFor(() => own.collector.frames('task-shut').length >= 1, 30_000, 'a frame');
      const job = own.parts.jobs.get('task-shut');
      expect(job?.status).toBe('running');
      await own.parts.jobs.close();
      expect(own.parts.jobs.get('task-shut')).toMatchObject({
        status: 'failed',
        reason: expect.stringMatching(/^backend_shutdown: /),
      });
      await new Promise((r) => setTimeout(r, 300)); // an end would have been published by now
      expect(own.collector.messages('task-shut').filter((m) => m.type === 'end')).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
