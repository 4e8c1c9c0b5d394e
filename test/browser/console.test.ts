/**
 * The web console in a real browser (Debian's chromium through playwright-core) against the standalone
 * stack: boxes drawn where the API put them, the video overlay following PTS, the min_score re-read,
 * the live view and stop, errors with their codes. Screenshots of every page at 1280×800 and phone
 * size go to test-artifacts/console (CONSOLE_SCREENSHOTS_DIR).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { colourOf } from '../../packages/console/src/timeline';
import { MEDIA, startStandaloneStack, type TestStack } from '../helpers/stack';
import { startMediaServer, waitFor, type MediaServer } from '../helpers/media-server';
import {
  colourDistance,
  enterKey,
  launchChromium,
  newContext,
  pixelsOf,
  rgbOf,
  screenshots,
  watchErrors,
} from './support';
import { keepClearOfQuotaDayTurn } from '../helpers/quota-day';

// The cases compare a subject's quota before and after their work: not across the quota day's turn.
keepClearOfQuotaDayTurn();

const KEY = 'browser-console-key-0123456789';
const IMAGE = path.join(MEDIA, 'images', 'street_bus_pedestrians_coco2006.jpg');
/** 10 frames per second: every result frame (5 per second) is a frame of the video itself. */
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
const PARKING = path.join(MEDIA, 'videos', 'person_bicycle_car_parkinglot_intel.mp4');

interface Obj {
  label: string;
  score: number;
  track_id?: string;
  bbox: { cx: number; cy: number; width: number; height: number };
}
interface Frame {
  frame_id: string;
  frame_time_ms: number;
  objects: Obj[];
}
interface DrawnBox {
  label: string;
  score: number;
  track?: string;
  x: number;
  y: number;
  w: number;
  h: number;
  stroke: string;
}

/** Only real failures: a 401/404 answer also logs "Failed to load resource" in chromium. */
const realErrors = (errors: string[]) => errors.filter((e) => !e.includes('Failed to load resource'));

describe('web console in chromium', () => {
  let stack: TestStack;
  let media: MediaServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let fileTask = '';
  /** Every request the main page made, for the check of where the key goes. */
  const sent: { url: string; headers: Record<string, string>; body: string }[] = [];

  beforeAll(async () => {
    stack = await startStandaloneStack({
      keys: `${KEY}:console`,
      // The live create probes the stream (ffmpeg's first frames): generous on a busy machine, as in the
      // other live tests (with the 5 s default, one run at load 9 never reached the live task's page).
      // A results stream lives 4 s here, so that the console's reconnects with Last-Event-ID are exercised.
      env: {
        TASKS_POLL_INTERVAL_MS: '500',
        QUOTA_VIDEO_DAILY: '20',
        TASKS_PROBE_TIMEOUT_MS: '45000',
        RESULTS_STREAM_MAX_MS: '4000',
      },
    });
    media = await startMediaServer({ 'parking.mp4': PARKING });
    browser = await launchChromium();
    context = await newContext(browser);
    page = await context.newPage();
    errors = watchErrors(page);
    page.on('request', (r) => sent.push({ url: r.url(), headers: r.headers(), body: r.postData() ?? '' }));
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await media?.close();
    await stack?.close();
  });

  const api = (method: string, urlPath: string) => stack.api(method, urlPath, { key: KEY });

  it('this chromium plays H.264 in MP4 and has requestVideoFrameCallback', async () => {
    await page.goto(`${stack.url}/console/`);
    const caps = await page.evaluate(() => {
      const v = document.createElement('video');
      return {
        h264: v.canPlayType('video/mp4; codecs="avc1.640028"'),
        rvfc: 'requestVideoFrameCallback' in HTMLVideoElement.prototype,
      };
    });
    expect(caps).toEqual({ h264: 'probably', rvfc: true });
  }, 60_000);

  it('an invalid key shows OP-AUTH-REQUIRED with its message', async () => {
    const ctx = await newContext(browser);
    const p = await ctx.newPage();
    await p.goto(`${stack.url}/console/`);
    await p.locator('.welcome').waitFor();
    await screenshots(p, '0-no-key');
    await enterKey(p, stack.url, 'not-a-key-of-this-service-0123');
    const error = p.locator('.error[data-code="OP-AUTH-REQUIRED"]');
    await error.waitFor();
    expect(await error.locator('.message').textContent()).toMatch(/API key is required/);
    await screenshots(p, '1-invalid-key');
    await ctx.close();
  }, 60_000);

  it('overview: the scenes with engines and labels, and the quota left today', async () => {
    await enterKey(page, stack.url, KEY);
    await page.locator('table.scenes tbody tr').first().waitFor();
    const scenes = (await api('GET', '/api/op/v1/scenes')).body.scenes as {
      scene_code: string;
      engine: string;
      labels: string[];
      enabled: boolean;
    }[];
    for (const sc of scenes) {
      const row = page.locator(`tr[data-scene="${sc.scene_code}"]`);
      expect(await row.getAttribute('class')).toBe(sc.enabled ? 'on' : 'off');
      expect(await row.textContent()).toContain(sc.engine);
      expect(await row.locator('.chip').allTextContents()).toEqual(sc.labels);
    }
    const quota = (await api('GET', '/v1/vision/quota')).body;
    expect(await page.locator('[data-kind="video tasks"] .remaining').textContent()).toBe(
      String(quota.video_tasks.remaining),
    );
    expect(await page.locator('[data-kind="images"] .remaining').textContent()).toBe(
      String(quota.images.remaining),
    );
    await screenshots(page, '2-overview');
  }, 60_000);

  it('images: each box is drawn where the API put it; a failed image shows its code; the slider filters', async () => {
    await enterKey(page, stack.url, KEY, '#/images');
    await page.locator('select[name=scene_code]').selectOption('person_vehicle');
    const jpeg = readFileSync(IMAGE);
    await page.setInputFiles('#image-files', [
      { name: path.basename(IMAGE), mimeType: 'image/jpeg', buffer: jpeg },
      // Right magic bytes, cut short: the backend cannot decode it, so this one image fails.
      { name: 'broken.jpg', mimeType: 'image/jpeg', buffer: jpeg.subarray(0, Math.floor(jpeg.length / 3)) },
    ]);
    const answer = page.waitForResponse((r) => r.url().endsWith('/v1/vision/image-detections'));
    await page.click('button:has-text("Detect")');
    const body = (await (await answer).json()) as {
      results: { seq: number; status: string; objects?: Obj[] }[];
    };
    expect(body.results.map((r) => r.status)).toEqual(['succeeded', 'failed']);
    await page.locator('figure[data-seq="1"] .error-code[data-code="OP-TASK-REQUEST-INVALID"]').waitFor();

    const card = page.locator('figure[data-seq="0"]');
    await card.locator('g.box').first().waitFor();
    const objects = body.results[0].objects!;
    const drawnAt = (min: number) => objects.filter((o) => o.score >= min);
    expect(await card.locator('g.box').count()).toBe(drawnAt(0.5).length);
    expect(drawnAt(0.5).length).toBeGreaterThan(0);

    // Pixels: the stroke of each drawn box lies on the returned box's edges, in its label's colour.
    const stage = card.locator('.stage');
    const px = await pixelsOf(stage);
    for (const o of drawnAt(0.5)) {
      const x0 = (o.bbox.cx - o.bbox.width / 2) * px.width;
      const x1 = (o.bbox.cx + o.bbox.width / 2) * px.width;
      const y0 = (o.bbox.cy - o.bbox.height / 2) * px.height;
      const y1 = (o.bbox.cy + o.bbox.height / 2) * px.height;
      const colour = rgbOf(colourOf(o.label));
      const onStroke = (x: number, y: number) =>
        [-1, 0, 1].some(
          (d) => colourDistance(px.at(Math.min(px.width - 1, Math.max(0, x + d)), y), colour) < 60,
        );
      // Sample the middle part of the left and right edges (captions sit at the top).
      let hits = 0;
      let samples = 0;
      for (let y = y0 + (y1 - y0) * 0.35; y <= y0 + (y1 - y0) * 0.65; y += 2) {
        samples += 2;
        if (onStroke(x0, y)) hits++;
        if (onStroke(x1, y)) hits++;
      }
      expect(hits / samples).toBeGreaterThan(0.8);
      // Half way between the edges, inside the box, the picture is not all stroke colour.
      const inside = [0.3, 0.5, 0.7].filter((f) => onStroke(x0 + (x1 - x0) / 2, y0 + (y1 - y0) * f)).length;
      expect(inside).toBeLessThan(3);
    }
    await screenshots(page, '3-images');

    // The slider filters what is drawn (no new request).
    await page.evaluate(() => {
      const s = document.querySelector<HTMLInputElement>('input[name=min_score]')!;
      s.value = '0.9';
      s.dispatchEvent(new Event('input'));
      s.dispatchEvent(new Event('change'));
    });
    expect(await card.locator('g.box').count()).toBe(drawnAt(0.9).length);
    expect(drawnAt(0.9).length).toBeLessThan(drawnAt(0.5).length);
  }, 120_000);

  it('images: dropped files are taken like picked ones; more than 10 cannot be sent', async () => {
    await enterKey(page, stack.url, KEY, '#/images');
    await page.locator('select[name=scene_code]').selectOption('person_vehicle');
    const drop = (count: number) =>
      page.evaluate(
        ({ b64, count }) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const dt = new DataTransfer();
          for (let i = 0; i < count; i++)
            dt.items.add(new File([bytes], `dropped-${i}.jpg`, { type: 'image/jpeg' }));
          const zone = document.querySelector('label.drop')!;
          zone.dispatchEvent(
            new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }),
          );
          zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        },
        { b64: readFileSync(IMAGE).toString('base64'), count },
      );
    const detect = page.locator('button:has-text("Detect")');
    await drop(11);
    expect(await detect.isDisabled()).toBe(true);
    await drop(1);
    expect(await detect.isDisabled()).toBe(false);
    const answer = page.waitForResponse((r) => r.url().endsWith('/v1/vision/image-detections'));
    await detect.click();
    expect((await answer).status()).toBe(201);
    // The dropped image's card (not one left from an earlier detection), with its boxes drawn.
    const card = page.locator('figure[data-seq="0"][data-status="succeeded"]', {
      has: page.locator('.name', { hasText: 'dropped-0.jpg' }),
    });
    await card.locator('g.box').first().waitFor();
  }, 60_000);

  it('video tasks: upload with progress; the overlay follows PTS; min_score re-reads with fewer boxes', async () => {
    await enterKey(page, stack.url, KEY, '#/tasks');
    await page.locator('form.create-file select').waitFor();
    await page.setInputFiles('form.create-file input[type=file]', CLIP);
    // Record what the progress bar shows while the file goes up.
    await page.evaluate(() => {
      const bar = document.querySelector<HTMLProgressElement>('.upload-progress')!;
      const seen: number[] = [];
      (window as unknown as { progressSeen: number[] }).progressSeen = seen;
      new MutationObserver(() => seen.push(bar.value)).observe(bar, { attributes: true });
    });
    const progressSeen = page.waitForFunction(() =>
      (window as unknown as { progressSeen: number[] }).progressSeen.includes(100),
    );
    await page.click('form.create-file button[type=submit]');
    await progressSeen;
    await page.waitForURL(/#\/tasks\/[^/]+$/, { timeout: 60_000 });
    fileTask = decodeURIComponent(page.url().split('#/tasks/')[1]);
    await waitFor(
      'the task to succeed',
      async () =>
        (await api('GET', `/v1/vision/tasks/${fileTask}`)).body.status === 'succeeded' ? true : undefined,
      180_000,
    );
    await page.locator('.player-wrap[data-mode="worker"] video').waitFor();
    await page.locator('.frame-count[data-ended="true"]').waitFor({ timeout: 60_000 });
    await page.locator('.task-status [data-status="succeeded"]').waitFor({ timeout: 30_000 });

    const framesAt = async (minScore?: number): Promise<Frame[]> => {
      const q = `limit=500${minScore === undefined ? '' : `&min_score=${minScore}`}`;
      const r = await api('GET', `/v1/vision/tasks/${fileTask}/results?${q}`);
      expect(r.body.next_cursor).toBe('');
      return r.body.items as Frame[];
    };
    const frames = await framesAt();
    expect(Number(await page.locator('.frame-count').getAttribute('data-frames'))).toBe(frames.length);
    const { durationMs, ...size } = await page.evaluate(() => {
      const v = document.querySelector('video')!;
      return { w: v.videoWidth, h: v.videoHeight, durationMs: v.duration * 1000 };
    });
    expect(size).toEqual({ w: 480, h: 360 });

    const seek = async (tMs: number) => {
      await page.evaluate((t) => {
        document.querySelector('video')!.currentTime = t / 1000;
      }, tMs);
      // The overlay is redrawn for the frame the browser presents: a PTS at most one video frame before t.
      await page
        .waitForFunction(
          (t) => {
            const m = Number(document.querySelector<SVGSVGElement>('svg.overlay')?.dataset.mediaTime);
            return m <= t && m > t - 100;
          },
          tMs,
          { timeout: 15_000 },
        )
        .catch(async (err: Error) => {
          const state = await page.evaluate(() => {
            const v = document.querySelector('video')!;
            const o = document.querySelector<SVGSVGElement>('svg.overlay')!;
            return { ...o.dataset, currentTime: v.currentTime, readyState: v.readyState, seeking: v.seeking };
          });
          throw new Error(`seek to ${tMs} ms: ${JSON.stringify(state)}: ${err.message}`);
        });
    };
    const drawn = () =>
      page.$$eval('svg.overlay g.box', (gs) =>
        gs.map((g) => ({
          label: g.getAttribute('data-label')!,
          score: Number(g.getAttribute('data-score')),
          track: g.getAttribute('data-track') ?? undefined,
          x: Number(g.getAttribute('data-x')),
          y: Number(g.getAttribute('data-y')),
          w: Number(g.getAttribute('data-w')),
          h: Number(g.getAttribute('data-h')),
          stroke: g.querySelector('rect')!.getAttribute('stroke')!,
        })),
      );
    const expectShown = async (tMs: number, all: Frame[]) => {
      const expected = all.filter((f) => f.frame_time_ms <= tMs).pop();
      expect(await page.locator('svg.overlay').getAttribute('data-frame-id')).toBe(expected?.frame_id ?? '');
      const boxes: DrawnBox[] = await drawn();
      expect(boxes.map(({ label, score, track }) => ({ label, score, track }))).toEqual(
        (expected?.objects ?? []).map((o) => ({ label: o.label, score: o.score, track: o.track_id })),
      );
      (expected?.objects ?? []).forEach((o, i) => {
        expect(boxes[i].x).toBeCloseTo((o.bbox.cx - o.bbox.width / 2) * size.w, 1);
        expect(boxes[i].y).toBeCloseTo((o.bbox.cy - o.bbox.height / 2) * size.h, 1);
        expect(boxes[i].w).toBeCloseTo(o.bbox.width * size.w, 1);
        expect(boxes[i].h).toBeCloseTo(o.bbox.height * size.h, 1);
      });
      return boxes;
    };

    // Times inside the gaps between result frames (and one exactly on a frame), where some are drawn.
    const withObjects = frames
      .map((f, i) => ({ f, i }))
      // Inside the playable part (the last result frames can lie past the last frame the player shows).
      .filter(
        ({ f, i }) =>
          f.objects.length && i + 1 < frames.length && frames[i + 1].frame_time_ms < durationMs - 100,
      );
    expect(withObjects.length).toBeGreaterThan(2);
    const picks = [
      withObjects[0],
      withObjects[Math.floor(withObjects.length / 2)],
      withObjects[withObjects.length - 1],
    ];
    const times = [
      ...picks.map(({ f, i }) => Math.floor((f.frame_time_ms + frames[i + 1].frame_time_ms) / 2)),
      picks[1].f.frame_time_ms,
    ];
    const colours = new Map<string, Set<string>>();
    for (const t of times) {
      await seek(t);
      for (const b of await expectShown(t, frames)) {
        if (!b.track) continue;
        colours.set(b.track, (colours.get(b.track) ?? new Set()).add(b.stroke));
        expect(b.stroke).toBe(colourOf(`track:${b.track}`));
      }
    }
    // A track keeps its colour from frame to frame.
    for (const [, set] of colours) expect(set.size).toBe(1);
    await screenshots(page, '4-video-task');

    // min_score: the page re-reads the results at the new threshold; fewer boxes where scores were lower.
    const strict = await framesAt(0.95);
    const fewer = times.find((t) => {
      const before = frames.filter((f) => f.frame_time_ms <= t).pop()!;
      const after = strict.filter((f) => f.frame_time_ms <= t).pop()!;
      return after.objects.length < before.objects.length;
    });
    const reread = page.waitForRequest(
      (r) => r.url().includes('/results?') && r.url().includes('min_score=0.95'),
    );
    await page.evaluate(() => {
      const s = document.querySelector<HTMLInputElement>('input[name=min_score]')!;
      s.value = '0.95';
      s.dispatchEvent(new Event('input'));
      s.dispatchEvent(new Event('change'));
    });
    await reread;
    await page.locator('.frame-count[data-ended="true"]').waitFor();
    const t = fewer ?? times[0];
    await seek(t + 1);
    const before = frames.filter((f) => f.frame_time_ms <= t + 1).pop()!.objects.length;
    const boxes = await expectShown(t + 1, strict);
    expect(fewer).toBeDefined();
    expect(boxes.length).toBeLessThan(before);
    await screenshots(page, '5-video-task-min-score');
    expect(realErrors(errors)).toEqual([]);
  }, 420_000);

  it('keeps the key in sessionStorage only and sends it as Authorization: Bearer, nowhere else', async () => {
    await page.goto(`${stack.url}/console/#/tasks`);
    await page.locator(`tr[data-task="${fileTask}"]`).waitFor();
    const stored = await page.evaluate(() => ({
      session: Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)),
      local: Object.keys(localStorage).map((k) => localStorage.getItem(k)),
      cookie: document.cookie,
    }));
    expect(stored).toEqual({ session: [KEY], local: [], cookie: '' });
    expect(await context.cookies()).toEqual([]);
    const api = sent.filter((r) => /^\/(v1|api)\//.test(new URL(r.url).pathname));
    expect(api.length).toBeGreaterThan(10);
    for (const r of api) {
      // The player's own requests for the uploaded video go through the service worker, which adds it.
      if (r.url.endsWith('/video') && !r.headers.authorization) continue;
      expect([r.url, r.headers.authorization]).toEqual([r.url, `Bearer ${KEY}`]);
    }
    // Never in an address (query, fragment) or a request body.
    expect(sent.filter((r) => r.url.includes(KEY) || r.body.includes(KEY))).toEqual([]);
  }, 60_000);

  it('the task list shows the task with its live status', async () => {
    await page.goto(`${stack.url}/console/#/tasks`);
    const row = page.locator(`tr[data-task="${fileTask}"]`);
    await row.waitFor();
    expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('succeeded');
    await screenshots(page, '6-task-list');
  }, 60_000);

  it('the task list follows a running task to its end without a reload', async () => {
    await page.goto(`${stack.url}/console/#/tasks`);
    const created = await stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({ scene_code: 'person_vehicle', stream_url: `${media.url}/live/parking.mp4` }),
    });
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;
    const status = page.locator(`tr[data-task="${id}"] [data-status]`);
    await page.locator(`tr[data-task="${id}"] [data-status="running"]`).waitFor({ timeout: 60_000 });
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    expect((await stack.api('POST', `/v1/vision/tasks/${id}/stop`, { key: KEY })).status).toBe(200);
    await page.locator(`tr[data-task="${id}"] [data-status="stopped"]`).waitFor({ timeout: 30_000 });
    expect(await status.getAttribute('data-status')).toBe('stopped');
    expect(navigations).toEqual([]);
  }, 120_000);

  it('without a service worker the video is downloaded with the key and still plays with its boxes', async () => {
    const ctx = await newContext(browser, { serviceWorkers: 'block' });
    const p = await ctx.newPage();
    await enterKey(p, stack.url, KEY, `#/tasks/${fileTask}`);
    await p.locator('.player-wrap[data-mode="download"] video').waitFor({ timeout: 30_000 });
    await p.waitForFunction(() => (document.querySelector('video')?.videoWidth ?? 0) > 0);
    await p.locator('.frame-count[data-ended="true"]').waitFor({ timeout: 30_000 });
    await p.evaluate(() => {
      document.querySelector('video')!.currentTime = 5;
    });
    await p.waitForFunction(
      () => Number(document.querySelector<SVGSVGElement>('svg.overlay')?.dataset.mediaTime) > 4800,
    );
    expect(await p.locator('svg.overlay').getAttribute('data-frame-id')).not.toBe('');
    await ctx.close();
  }, 120_000);

  it('live task: frames come over the results stream (resumed with Last-Event-ID), never from the page endpoint', async () => {
    await enterKey(page, stack.url, KEY, '#/tasks');
    await page.locator('form.create-url select').waitFor();
    await page.fill('form.create-url input[name=stream_url]', `${media.url}/live/parking.mp4`);
    await page.click('form.create-url button[type=submit]');
    // The task's page, or the error the console shows instead (then the failure says which).
    await page.waitForFunction(
      () => /#\/tasks\/[^/]+$/.test(location.hash) || document.querySelector('.error[data-code]'),
      undefined,
      { timeout: 60_000 },
    );
    if (!/#\/tasks\/[^/]+$/.test(page.url()))
      throw new Error(
        `the create was refused: ${await page.locator('.error[data-code]').first().textContent()}`,
      );
    const id = decodeURIComponent(page.url().split('#/tasks/')[1]);
    const isStream = (url: string) => new URL(url).pathname === `/v1/vision/tasks/${id}/results/stream`;
    await page.locator('.live').waitFor();
    // Everything stored, so that the chart has lines to draw whatever the scores.
    await page.evaluate(() => {
      const s = document.querySelector<HTMLInputElement>('input[name=min_score]')!;
      s.value = '0';
      s.dispatchEvent(new Event('input'));
      s.dispatchEvent(new Event('change'));
    });
    await page.locator('.live ul.frames li').first().waitFor({ timeout: 60_000 });
    await page.locator('svg.chart polyline').first().waitFor({ timeout: 60_000 });
    const first = Number(await page.locator('.frame-count').getAttribute('data-frames'));
    await page.waitForFunction(
      (n) => Number(document.querySelector<HTMLElement>('.frame-count')?.dataset.frames) > n,
      first,
      { timeout: 30_000 },
    );
    // Each stream ends after 4 s (RESULTS_STREAM_MAX_MS): the console reopens it after its last frame.
    await page.waitForRequest((r) => isStream(r.url()) && Boolean(r.headers()['last-event-id']), {
      timeout: 30_000,
    });
    await screenshots(page, '7-live-task');
    await page.click('button:has-text("Stop")');
    await page.locator('.task-status [data-status="stopped"]').waitFor({ timeout: 60_000 });
    expect((await api('GET', `/v1/vision/tasks/${id}`)).body.status).toBe('stopped');
    // The stream's `end`: every frame of the task, each once, as the page endpoint has them.
    await page.locator('.frame-count[data-ended="true"]').waitFor({ timeout: 60_000 });
    const stored: Frame[] = [];
    let cursor = '';
    do {
      const r = await api('GET', `/v1/vision/tasks/${id}/results?limit=500&min_score=0&cursor=${cursor}`);
      stored.push(...(r.body.items as Frame[]));
      cursor = r.body.next_cursor as string;
    } while (cursor);
    expect(Number(await page.locator('.frame-count').getAttribute('data-frames'))).toBe(stored.length);
    const shown = await page
      .locator('.live ul.frames li')
      .evaluateAll((li) => li.map((e) => e.getAttribute('data-frame')));
    expect(shown).toEqual(
      stored
        .slice(-5)
        .reverse()
        .map((f) => f.frame_id),
    );
    // Where the frames came from: the stream, with the key in its header; the page endpoint never.
    const reads = sent.filter((r) => new URL(r.url).pathname.startsWith(`/v1/vision/tasks/${id}/results`));
    const streams = reads.filter((r) => isStream(r.url));
    expect(streams.length).toBeGreaterThan(1);
    expect(reads.filter((r) => !isStream(r.url)).map((r) => r.url)).toEqual([]);
    for (const r of streams)
      expect([r.headers.authorization, r.headers.accept]).toEqual([`Bearer ${KEY}`, 'text/event-stream']);
    await screenshots(page, '8-live-task-stopped');
    expect(realErrors(errors)).toEqual([]);
  }, 240_000);
});
