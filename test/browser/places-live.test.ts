/**
 * Zones and lines of a live stream task in the web console, in chromium against the standalone stack and a real
 * RTSP camera (gst-rtsp-server with a user and password, scripts/stack/live): the stream's latest picture, read
 * through the API, is the stage the rules are drawn on; the counts follow the analytics while the task runs and
 * the events come onto the timeline as they happen; a line drawn on the picture is saved as a new rules version
 * and counts crossings. The camera's password appears nowhere in the page.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { FLOOR, taskEvents } from '../helpers/places';
import { startStandaloneStack, type TestStack } from '../helpers/stack';
import { waitFor } from '../helpers/media-server';
import { RTSP_PASS, streamServer, streamUrls, type StreamServer } from '../helpers/stream-servers';
import { enterKey, launchChromium, newContext, screenshots, watchErrors } from './support';

const KEY = 'browser-places-live-key-0123456789';
/** The camera's frames (scripts/stack/live/media.sh): 480 x 360. */
const CAMERA_ASPECT = 480 / 360;

interface PlaceEvent {
  kind: string;
  rule_id: string;
  media_ms: number;
}
const realErrors = (errors: string[]) => errors.filter((e) => !e.includes('Failed to load resource'));

describe('zones and lines of a live stream task in the web console', () => {
  let stack: TestStack;
  let camera: StreamServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let taskId = '';

  const api = (method: string, urlPath: string, json?: unknown) =>
    stack.api(method, urlPath, {
      key: KEY,
      ...(json !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) }
        : {}),
    });
  const allEvents = () => taskEvents<PlaceEvent>(api, taskId);
  const shownNumber = (selector: string, attribute: string) =>
    page.locator(selector).evaluate((el, a) => Number(el.getAttribute(a) ?? NaN), attribute);

  beforeAll(async () => {
    camera = await streamServer('rtsp-auth');
    await camera.start();
    stack = await startStandaloneStack({
      keys: `${KEY}:places-live`,
      env: { TASKS_POLL_INTERVAL_MS: '500', TASKS_PROBE_TIMEOUT_MS: '45000' },
    });
    browser = await launchChromium();
    page = await (await newContext(browser)).newPage();
    errors = watchErrors(page);
    const created = await stack.api('POST', '/v1/vision/tasks', {
      key: KEY,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        scene_code: 'person_vehicle',
        stream_url: streamUrls(camera).rtsp,
        zones: [FLOOR],
      }),
    });
    expect(created.status).toBe(201);
    taskId = created.body.task_id as string;
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await camera?.stop();
  });

  it("shows the stream's latest picture with the zone over it, live counts and events as they come", async () => {
    // The picture through the API: a JPEG of the camera's frame, at its aspect ratio, and not a blank one.
    const still = await waitFor(
      'a picture of the stream',
      async () => {
        const r = await fetch(`${stack.url}/v1/vision/tasks/${taskId}/snapshot`, {
          headers: { authorization: `Bearer ${KEY}` },
        });
        return r.status === 200 ? r : undefined;
      },
      120_000,
    );
    expect(still.headers.get('content-type')).toBe('image/jpeg');
    const { data, info } = await sharp(Buffer.from(await still.arrayBuffer()))
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(Math.abs(info.width / info.height - CAMERA_ASPECT)).toBeLessThan(0.01);
    const mean = data.reduce((a, v) => a + v, 0) / data.length;
    const sd = Math.sqrt(data.reduce((a, v) => a + (v - mean) ** 2, 0) / data.length);
    expect(sd).toBeGreaterThan(10);

    await enterKey(page, stack.url, KEY, `#/tasks/${encodeURIComponent(taskId)}`);
    await page.locator('.places .rules-version[data-version="1"]').waitFor();
    const img = page.locator('.still-stage img.still');
    await page.waitForFunction(
      () => (document.querySelector<HTMLImageElement>('.still-stage img.still')?.naturalWidth ?? 0) > 0,
      undefined,
      { timeout: 60_000 },
    );
    const shown = await img.evaluate((el: HTMLImageElement) => ({
      natural: el.naturalWidth / el.naturalHeight,
      box: el.getBoundingClientRect().width / el.getBoundingClientRect().height,
    }));
    expect(Math.abs(shown.natural - CAMERA_ASPECT)).toBeLessThan(0.01);
    expect(Math.abs(shown.box - CAMERA_ASPECT)).toBeLessThan(0.02);
    // The editor covers the picture exactly, and the zone is drawn where the API has it.
    const [imgBox, editorBox] = await Promise.all([
      img.boundingBox(),
      page.locator('.still-stage .places-editor').boundingBox(),
    ]);
    for (const k of ['x', 'y', 'width', 'height'] as const)
      expect(Math.abs(editorBox![k] - imgBox![k])).toBeLessThan(1);
    expect(await page.locator('.places-editor polygon.zone[data-rule="floor"]').getAttribute('points')).toBe(
      '0,0 1,0 1,1 0,1',
    );
    // The picture is read again while the task runs: a later frame replaces it.
    const firstAt = Number(await img.getAttribute('data-frame-time-ms'));
    await page.waitForFunction(
      (t) => Number(document.querySelector('.still-stage img.still')?.getAttribute('data-frame-time-ms')) > t,
      firstAt,
      { timeout: 30_000 },
    );

    // Counts follow the analytics as the task runs: the summary's frame advances on the page, and the zone's
    // visits shown are those the API gave for that frame.
    const asOf = await shownNumber('.places-list', 'data-as-of');
    await page.waitForFunction(
      (n) => Number(document.querySelector('.places-list')?.getAttribute('data-as-of')) > n,
      Number.isNaN(asOf) ? -1 : asOf,
      { timeout: 30_000 },
    );
    const visits = await waitFor(
      'visits of the zone',
      async () => {
        const a = (await api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body as {
          rules: { id: string; visits?: { total: number } }[];
        };
        const total = a.rules.find((r) => r.id === 'floor')?.visits?.total ?? 0;
        return total >= 1 ? total : undefined;
      },
      60_000,
    );
    await page.waitForFunction(
      (n) => {
        const m = /visits (\d+)/.exec(
          document.querySelector('.places-list li[data-rule="floor"] .counts')?.textContent ?? '',
        );
        return m !== null && Number(m[1]) >= n;
      },
      visits,
      { timeout: 30_000 },
    );
    // Events come onto the timeline while the task runs (it has not ended).
    const running = await allEvents();
    expect(running.ended).toBe(false);
    expect(running.items.some((e) => e.kind === 'zone.entered')).toBe(true);
    await page.waitForFunction(
      (n) => document.querySelectorAll('.events-timeline .event-mark[data-kind="zone.entered"]').length >= n,
      running.items.filter((e) => e.kind === 'zone.entered').length,
      { timeout: 30_000 },
    );
    expect(await page.locator('.events-timeline').getAttribute('data-ended')).toBe('false');
    expect((await api('GET', `/v1/vision/tasks/${taskId}`)).body.status).toBe('running');
    await screenshots(page, 'places-live-1-running');
  }, 300_000);

  it('a line drawn on the picture is saved as a new rules version and counts crossings live', async () => {
    await page.click('.places .add-line');
    const editor = page.locator('.still-stage .places-editor');
    await editor.scrollIntoViewIfNeeded();
    const box = (await editor.boundingBox())!;
    await page.mouse.click(box.x + 0.5 * box.width, box.y + 0.02 * box.height);
    await page.mouse.click(box.x + 0.5 * box.width, box.y + 0.98 * box.height);
    await page.click('.places .save-rules');
    await page.locator('.places .rules-version[data-version="2"]').waitFor();
    const rules = (await api('GET', `/v1/vision/tasks/${taskId}/rules`)).body as {
      lines: { id: string; start: number[]; end: number[] }[];
    };
    expect(rules.lines).toHaveLength(1);
    const [line] = rules.lines;
    for (const [got, want] of [
      [line.start, [0.5, 0.02]],
      [line.end, [0.5, 0.98]],
    ])
      expect(Math.hypot(got[0] - want[0], got[1] - want[1])).toBeLessThan(0.01);

    // People walk across the middle of the camera's picture: the line counts them, on the page too.
    const crossed = await waitFor(
      'a crossing of the drawn line',
      async () => {
        const { items } = await allEvents();
        const n = items.filter((e) => e.kind === 'line.crossed' && e.rule_id === line.id).length;
        return n >= 1 ? n : undefined;
      },
      120_000,
    );
    await page
      .locator(`.events-timeline .event-mark[data-kind="line.crossed"][data-rule="${line.id}"]`)
      .first()
      .waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      ([id, n]) => {
        const m = /in (\d+), out (\d+)/.exec(
          document.querySelector(`.places-list li[data-rule="${id}"] .counts`)?.textContent ?? '',
        );
        return m !== null && Number(m[1]) + Number(m[2]) >= (n as number);
      },
      [line.id, crossed] as const,
      { timeout: 30_000 },
    );

    // Stopped, the task's events are all read: one mark per event, and the picture stays as it was.
    expect((await api('POST', `/v1/vision/tasks/${taskId}/stop`)).status).toBe(200);
    const all = await waitFor(
      'every event of the stopped task',
      async () => {
        const e = await allEvents();
        return e.ended ? e.items : undefined;
      },
      120_000,
    );
    await page.locator(`.events-timeline[data-events="${all.length}"][data-ended="true"]`).waitFor({
      timeout: 30_000,
    });
    // Each mark sits at its event's share of the stream's span (media time is Unix ms on a live stream: the
    // timeline runs from its first frame, not from 1970).
    const placed = await page.evaluate(() => {
      const bar = document.querySelector<HTMLElement>('.events-timeline')!;
      const box = bar.getBoundingClientRect();
      const [from, to] = [Number(bar.dataset.startMs), Number(bar.dataset.endMs)];
      return {
        from,
        to,
        marks: [...document.querySelectorAll<HTMLElement>('.event-mark')].map((m) => {
          const r = m.getBoundingClientRect();
          return {
            at: (r.left + r.width / 2 - box.left) / box.width,
            want: (Number(m.dataset.mediaMs) - from) / (to - from),
          };
        }),
      };
    });
    const times = all.map((e) => e.media_ms);
    expect(placed.from).toBeLessThanOrEqual(Math.min(...times));
    expect(placed.to).toBeGreaterThanOrEqual(Math.max(...times));
    expect(placed.to - placed.from).toBeLessThan(10 * 60_000);
    for (const m of placed.marks) expect(Math.abs(m.at - m.want)).toBeLessThan(0.01);
    expect(new Set(placed.marks.map((m) => Math.round(m.at * 20))).size).toBeGreaterThan(1);
    const gone = await fetch(`${stack.url}/v1/vision/tasks/${taskId}/snapshot`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(gone.status).toBe(409);
    expect((await gone.json()).error.code).toBe('OP-TASK-NO-PICTURE');
    await screenshots(page, 'places-live-2-line');
    // The camera's credentials never reach the page.
    expect(await page.content()).not.toContain(RTSP_PASS);
    expect(await page.content()).not.toContain(encodeURIComponent(RTSP_PASS));
    expect(realErrors(errors)).toEqual([]);
  }, 300_000);
});
