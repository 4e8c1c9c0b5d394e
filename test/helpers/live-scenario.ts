/**
 * Live stream tasks end to end against real stream servers we did not write (scripts/stack/live):
 * GStreamer's gst-rtsp-server (RTSP over TCP, with and without Basic authentication), nginx with its
 * RTMP module fed by ffmpeg, and nginx serving ffmpeg's live HLS (delete_segments) and a progressive
 * MP4 over http and https. The sources are camera-like (a keyframe every second). One scenario, two
 * entry files: test/e2e/live-streams.test.ts (standalone) and test/distributed/live-streams.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { startStack, type TestStack } from './stack';
import { waitFor } from './media-server';
import { streamServer, streamUrls, type StreamServer } from './stream-servers';

const KEY = 'e2e-live-streams-0123456789';
const GIVEUP_MS = 15_000;

interface Frame {
  frame_id: string;
  frame_time_ms: number;
  objects: { label: string; score: number; track_id?: string }[];
}

/**
 * The live-stream scenario, declared under `run` (describe, or describe.skip where the entry file's suite
 * does not apply): test/e2e/live-streams.test.ts runs it on the standalone stack, and
 * test/distributed/live-streams.test.ts on the distributed deployment (E2E_STACK=distributed).
 */
export function liveStreamScenario(run: jest.Describe): void {
  run('live stream tasks against real stream servers', () => {
    let stack: TestStack;
    const servers: Record<string, StreamServer> = {};
    let urls: Record<string, string> = {};

    beforeAll(async () => {
      for (const kind of ['rtsp', 'rtsp-auth', 'rtmp', 'http'] as const)
        servers[kind] = await streamServer(kind);
      await Promise.all(Object.values(servers).map((s) => s.start()));
      urls = {
        rtsp: streamUrls(servers.rtsp).rtsp,
        rtsp_auth: streamUrls(servers['rtsp-auth']).rtsp,
        rtmp: streamUrls(servers.rtmp).rtmp,
        ...streamUrls(servers.http),
      };
      // The https server's certificate comes from the test CA: this process must trust it (jest.config.js
      // sets NODE_EXTRA_CA_CERTS for its workers, scripts/test-distributed.sh for its in-band run; a single test
      // file run by hand runs in band: set it yourself, to `bash scripts/stack/live/tls.sh --trust`).
      const tls = await fetch(urls.https, { method: 'HEAD' }).catch((err: Error) => err);
      if (tls instanceof Error)
        throw new Error(
          `https test server not trusted (${String(tls.cause ?? tls)}): run with NODE_EXTRA_CA_CERTS=$(bash scripts/stack/live/tls.sh --trust)`,
        );
      stack = await startStack({
        keys: `${KEY}:live`,
        env: {
          QUOTA_VIDEO_DAILY: '50',
          TASKS_MAX_ACTIVE: '20',
          INFERENCE_MAX_JOBS: '12',
          INFERENCE_SAMPLE_FPS: '2',
          INFERENCE_STREAM_GIVEUP_MS: String(GIVEUP_MS),
          INFERENCE_RECONNECT_MIN_MS: '300',
          INFERENCE_RECONNECT_MAX_MS: '1000',
          TASKS_POLL_INTERVAL_MS: '300',
          // ffprobe needs ~3 s on a live source (analyzeduration); this machine is shared and often loaded.
          TASKS_PROBE_TIMEOUT_MS: '45000',
          // Distributed: the tasks service checks the https server too (it trusts the test CA the same way).
          ...(process.env.NODE_EXTRA_CA_CERTS
            ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS }
            : {}),
          TASKS_BACKEND_TIMEOUT_MS: '30000',
          TASKS_BREAKER_HANG_MS: '30000',
          // Six tasks' frames are read side by side, several times a second.
          GATEWAY_QPS: '200',
          GATEWAY_BURST: '200',
          GATEWAY_CONCURRENCY: '64',
        },
      });
    }, 180_000);
    afterAll(async () => {
      await stack?.close();
      await Promise.all(Object.values(servers).map((s) => s.stop()));
    });

    const create = async (scheme: string, url: string) => {
      const r = await stack.api('POST', '/v1/vision/tasks', {
        key: KEY,
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: url }),
      });
      expect({ scheme, status: r.status, body: r.body }).toMatchObject({
        scheme,
        status: 201,
        body: { status: 'running' },
      });
      return r.body.task_id as string;
    };
    const status = async (id: string) =>
      (await stack.api('GET', `/v1/vision/tasks/${id}`, { key: KEY })).body;

    /** Every frame stored so far (cursor paging; a running task's last page keeps its cursor). */
    async function frames(id: string): Promise<Frame[]> {
      const out: Frame[] = [];
      let cursor = '';
      for (let page = 0; page < 200; page++) {
        const q = new URLSearchParams({ limit: '100', min_score: '0.3', ...(cursor ? { cursor } : {}) });
        const r = await stack.api('GET', `/v1/vision/tasks/${id}/results?${q}`, { key: KEY });
        expect(r.status).toBe(200);
        out.push(...r.body.items);
        if (r.body.items.length === 0 || !r.body.next_cursor) return out;
        cursor = r.body.next_cursor;
      }
      return out;
    }

    const framesAfter = (id: string, n: number, sinceMs: number, what: string) =>
      waitFor(
        `${what}: ${n} frames of ${id} after ${sinceMs}`,
        async () => {
          const f = (await frames(id)).filter((x) => x.frame_time_ms >= sinceMs);
          return f.length >= n ? f : undefined;
        },
        180_000,
      );

    /** How many frames the most-seen person track_id appears in. */
    function longestTrack(list: Frame[]): number {
      const tracks = new Map<string, number>();
      for (const f of list)
        for (const o of f.objects)
          if (o.label === 'person' && o.track_id) tracks.set(o.track_id, (tracks.get(o.track_id) ?? 0) + 1);
      return Math.max(0, ...tracks.values());
    }

    /** Capture times near now and in order; persons keep their track_id from frame to frame. */
    function checkLiveFrames(scheme: string, list: Frame[], t0: number): void {
      const times = list.map((f) => f.frame_time_ms);
      expect({ scheme, sorted: [...times].sort((a, b) => a - b) }).toEqual({ scheme, sorted: times });
      expect(new Set(times).size).toBe(times.length);
      for (const t of times) {
        expect(t).toBeGreaterThan(t0 - 5_000);
        expect(t).toBeLessThan(Date.now() + 2_000);
      }
      // Some person is followed under one track_id across several frames.
      expect({ scheme, longest: longestTrack(list) >= 3 }).toEqual({ scheme, longest: true });
    }

    /**
     * The schemes each server serves. The four servers' scenarios run side by side: each restarts and stops only
     * its own server, and at most one set of its tasks runs at a time, so six tasks run at once, as at the start.
     */
    const byServer: Record<string, string[]> = {
      rtsp: ['rtsp'],
      'rtsp-auth': ['rtsp_auth'],
      rtmp: ['rtmp'],
      // nginx: ffmpeg's live HLS (delete_segments; a restart leaves the stopped muxer's finished playlist,
      // EXT-X-ENDLIST, until the new one writes) and the progressive MP4 over http and https (via the
      // egress proxy's CONNECT tunnel; the certificate is the test CA's).
      http: ['hls', 'http', 'https'],
    };

    /** One server's scenario: its tasks run, reconnect after a restart, stop; new ones fail once it is gone. */
    async function serverScenario(server: string): Promise<void> {
      const t0 = Date.now();
      const ids: Record<string, string> = {};
      for (const scheme of byServer[server]) ids[scheme] = await create(scheme, urls[scheme]);
      for (const [scheme, id] of Object.entries(ids)) {
        // The looping clip may be joined where nobody walks: read on until a person has been tracked
        // across 3 frames (or give up after 180 s and let checkLiveFrames say what was missing).
        await waitFor(
          `${scheme}: a person tracked across 3 frames`,
          async () => {
            const list = await frames(id);
            return list.length >= 8 && longestTrack(list) >= 3 ? true : undefined;
          },
          180_000,
        ).catch(() => undefined);
        const list = await framesAfter(id, 8, t0, scheme);
        checkLiveFrames(scheme, list, t0);
        expect((await status(id)).status).toBe('running');
      }

      // The server restarted mid-stream: each task reconnects and its frames resume.
      await servers[server].stop();
      await new Promise((r) => setTimeout(r, 1000));
      await servers[server].start();
      const restarted = Date.now();
      for (const [scheme, id] of Object.entries(ids)) {
        await framesAfter(id, 2, restarted, `${scheme} after the restart`);
        expect((await status(id)).status).toBe('running');
        const all = (await frames(id)).map((f) => f.frame_time_ms);
        expect(all).toEqual([...all].sort((a, b) => a - b));
      }

      for (const [scheme, id] of Object.entries(ids)) {
        const r = await stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: KEY });
        expect({ scheme, status: r.status }).toEqual({ scheme, status: 200 });
        const ended = await waitFor(`${scheme} stopped`, async () => {
          const st = await status(id);
          return st.status === 'stopped' ? st : undefined;
        });
        expect(ended.status).toBe('stopped');
      }

      // New tasks, then the server gone for good: failed, with a reason from the list, after the give-up time.
      // A new task decides at its first look whether a playlist is live: it waits for the restarted muxer's
      // own playlist, not the stale finished one (a finished playlist at the first look is a VOD, which may
      // end `succeeded`).
      if (byServer[server].includes('hls'))
        await waitFor(
          'a live playlist after the restart',
          async () => {
            const r = await fetch(urls.hls).catch(() => undefined);
            const text = r?.ok ? await r.text() : '#EXT-X-ENDLIST';
            return text.includes('#EXT-X-ENDLIST') ? undefined : true;
          },
          60_000,
        );
      const t1 = Date.now();
      const again: Record<string, string> = {};
      for (const scheme of byServer[server]) again[scheme] = await create(scheme, urls[scheme]);
      for (const [scheme, id] of Object.entries(again)) await framesAfter(id, 2, t1, scheme);
      await servers[server].stop();
      const goneAt = Date.now();
      for (const [scheme, id] of Object.entries(again)) {
        const ended = await waitFor(
          `${scheme} failed`,
          async () => {
            const st = await status(id);
            return st.status !== 'running' ? st : undefined;
          },
          GIVEUP_MS + 60_000,
        );
        expect({ scheme, status: ended.status }).toEqual({ scheme, status: 'failed' });
        expect(ended.reason).toMatch(
          /^stream_lost: the stream was lost and did not come back in time \(after 15000 ms, /,
        );
        expect(ended.reason).not.toMatch(/127\.0\.0\.1|camuser|\/cam|\/live/);
        expect(Date.now() - goneAt).toBeGreaterThanOrEqual(GIVEUP_MS - 1000);
      }
    }

    it('every server: running, frames near now with stable track_ids, reconnects after a server restart, stop -> stopped; gone for good -> failed', async () => {
      const names = Object.keys(byServer);
      // Each scenario runs to its end, so that a failure of one leaves no other running past the test.
      const outcomes = await Promise.allSettled(names.map(serverScenario));
      const failed = outcomes.flatMap((o, k) =>
        o.status === 'rejected' ? [`${names[k]}: ${String((o.reason as Error)?.stack ?? o.reason)}`] : [],
      );
      if (failed.length) throw new Error(failed.join('\n\n'));
    }, 600_000);
  });
}
