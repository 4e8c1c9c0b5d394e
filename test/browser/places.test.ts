/**
 * Zones and lines in the web console, in chromium against the standalone stack: a file task's rules drawn over
 * its video where the API put them, its counts and its events on the timeline as the API answers them, each event's
 * picture and the tracks' best shots; once the task has ended its rules are shown but not edited (drawing and saving
 * on a running task: places-live.test.ts).
 */
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { CURB, LEFT_LANE, PARKING_LOT } from '../helpers/places';
import { startStandaloneStack, type TestStack } from '../helpers/stack';
import { waitFor } from '../helpers/media-server';
import { uploadVideoTask } from '../helpers/uploads';
import { brokenImages, enterKey, launchChromium, newContext, screenshots, watchErrors } from './support';

const KEY = 'browser-places-key-0123456789';
const PARKING = PARKING_LOT;
const LANE = LEFT_LANE;

type Rules = { rules_version: number; zones: (typeof LANE)[]; lines: (typeof CURB)[] };
const realErrors = (errors: string[]) => errors.filter((e) => !e.includes('Failed to load resource'));

describe('zones and lines in the web console', () => {
  let stack: TestStack;
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
  const rules = async () => (await api('GET', `/v1/vision/tasks/${taskId}/rules`)).body as Rules;

  beforeAll(async () => {
    stack = await startStandaloneStack({ keys: `${KEY}:places`, env: { TASKS_POLL_INTERVAL_MS: '500' } });
    browser = await launchChromium();
    page = await (await newContext(browser)).newPage();
    errors = watchErrors(page);
    taskId = await uploadVideoTask(stack, KEY, PARKING, 'lot.mp4', {
      zones: JSON.stringify([LANE]),
      lines: JSON.stringify([CURB]),
    });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("shows the task's rules over the video, their counts, and every event on the timeline", async () => {
    const events = await waitFor(
      'every event of the task',
      async () => {
        const r = await api('GET', `/v1/vision/tasks/${taskId}/events?limit=500`);
        return r.body.next_cursor === ''
          ? (r.body.items as { kind: string; direction?: string; media_ms: number }[])
          : undefined;
      },
      180_000,
    );
    await enterKey(page, stack.url, KEY, `#/tasks/${encodeURIComponent(taskId)}`);
    await page.locator('.places .rules-version[data-version="1"]').waitFor();
    await page.locator('.events-timeline[data-ended="true"]').waitFor({ timeout: 30_000 });

    const zone = page.locator('.places-editor polygon.zone[data-rule="lane"]');
    expect(await zone.getAttribute('points')).toBe(LANE.polygon.map((p) => p.join(',')).join(' '));
    const line = page.locator('.places-editor line.line[data-rule="curb"]');
    expect(await Promise.all(['x1', 'y1', 'x2', 'y2'].map((a) => line.getAttribute(a)))).toEqual([
      '0.2',
      '0.7',
      '0.2',
      '0.3',
    ]);

    // The line's counts as the analytics answer them, and one mark per event.
    const analytics = (await api('GET', `/v1/vision/tasks/${taskId}/analytics`)).body as {
      rules: { id: string; in_total?: number; out_total?: number }[];
    };
    const curb = analytics.rules.find((r) => r.id === 'curb')!;
    expect(curb.in_total).toBeGreaterThanOrEqual(1);
    await page
      .locator('.places-list li[data-rule="curb"] .counts', {
        hasText: `in ${curb.in_total}, out ${curb.out_total}`,
      })
      .waitFor();
    expect(await page.locator('.events-timeline .event-mark').count()).toBe(events.length);
    expect(await page.locator('.event-mark[data-kind="line.crossed"]').count()).toBe(
      events.filter((e) => e.kind === 'line.crossed').length,
    );
    // Each mark sits at its event's share of the video's duration.
    const placed = await page.evaluate(() => {
      const bar = document.querySelector('.events-timeline')!.getBoundingClientRect();
      const duration = document.querySelector('video')!.duration * 1000;
      return [...document.querySelectorAll<HTMLElement>('.event-mark')].map((m) => {
        const r = m.getBoundingClientRect();
        return {
          at: (r.left + r.width / 2 - bar.left) / bar.width,
          want: Number(m.dataset.mediaMs) / duration,
        };
      });
    });
    expect(placed.length).toBe(events.length);
    for (const p of placed) expect(Math.abs(p.at - p.want)).toBeLessThan(0.01);
    // A mark seeks the video to its event.
    const first = events.find((e) => e.kind === 'line.crossed')!;
    await page
      .locator(`.event-mark[data-kind="line.crossed"][data-media-ms="${first.media_ms}"]`)
      .first()
      .click();
    await page.waitForFunction(
      (ms) => Math.abs(document.querySelector('video')!.currentTime * 1000 - ms) < 1,
      first.media_ms,
    );
    await screenshots(page, 'places-1-task');
  }, 240_000);

  it('shows a thumbnail per event, the frame with its box on a click, and the best shot of each track', async () => {
    type Event = {
      id: string;
      kind: string;
      has_snapshot: boolean;
      snapshot_reason?: string;
      track_id?: string;
    };
    const events = (await api('GET', `/v1/vision/tasks/${taskId}/events?limit=500`)).body.items as Event[];
    const pictured = events.filter((e) => e.has_snapshot);
    // A file task's frames are all there to picture: every line crossing has one.
    expect(events.filter((e) => e.kind === 'line.crossed').every((e) => e.has_snapshot)).toBe(true);
    const items = page.locator('.events-list .event-item');
    await page.locator(`.events-list[data-events="${events.length}"]`).waitFor();
    expect(await items.evaluateAll((li) => li.map((l) => (l as HTMLElement).dataset.eventId))).toEqual(
      events.map((e) => e.id),
    );
    // The pictures are read lazily: the list scrolls, and each thumbnail is read once it comes near the view.
    const states = await page
      .locator('.event-thumb-img')
      .evaluateAll((imgs) => imgs.map((i) => (i as HTMLElement).dataset.state));
    expect(states).toHaveLength(pictured.length);
    for (const e of events) {
      const item = page.locator(`.event-item[data-event-id="${e.id}"]`);
      await item.scrollIntoViewIfNeeded();
      if (!e.has_snapshot) {
        expect(await item.locator('.no-snapshot').getAttribute('data-reason')).toBe(e.snapshot_reason);
        continue;
      }
      const thumb = item.locator('img.event-thumb-img[data-state="loaded"]');
      await thumb.waitFor({ timeout: 15_000 });
      expect(await thumb.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      // The crop of the object for an event with a track, else the whole frame.
      expect(await thumb.getAttribute('data-path')).toBe(
        `/v1/vision/tasks/${taskId}/events/${e.id}/snapshot${e.track_id !== undefined ? '?crop=true' : ''}`,
      );
    }
    // A click shows the whole frame with the box: the picture the API answers, at its size.
    const first = pictured[0];
    const frame = await fetch(`${stack.url}/v1/vision/tasks/${taskId}/events/${first.id}/snapshot`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect([frame.status, frame.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
    const size = await sharp(Buffer.from(await frame.arrayBuffer())).metadata();
    await page.locator(`.event-item[data-event-id="${first.id}"] .event-thumb`).click();
    const full = page.locator('dialog.picture-dialog[open] img.picture-full[data-state="loaded"]');
    await full.waitFor({ timeout: 15_000 });
    expect(
      await full.evaluate((i) => [
        (i as HTMLImageElement).naturalWidth,
        (i as HTMLImageElement).naturalHeight,
      ]),
    ).toEqual([size.width, size.height]);
    await screenshots(page, 'places-3-event-picture');
    await page.locator('dialog.picture-dialog .picture-close').click();
    await page.locator('dialog.picture-dialog[open]').waitFor({ state: 'detached' });

    // The tracks' best shots: one per track the frames name one for, each read and shown.
    const shots = page.locator('.best-shots li');
    await page.locator('.best-shots[data-tracks]').waitFor();
    expect(await shots.count()).toBeGreaterThanOrEqual(1);
    const crossed = events.find((e) => e.kind === 'line.crossed' && e.track_id !== undefined)!;
    const shot = page.locator(`.best-shots li[data-track-id="${crossed.track_id}"] img.best-shot-img`);
    await shot.scrollIntoViewIfNeeded();
    await page
      .locator(`.best-shots li[data-track-id="${crossed.track_id}"] img.best-shot-img[data-state="loaded"]`)
      .waitFor({ timeout: 15_000 });
    // Every track's tile settles on its picture or on why it has none; no image of the page is left broken.
    const tiles = await shots.evaluateAll((li) => li.map((l) => (l as HTMLElement).dataset.trackId!));
    for (const id of tiles) {
      await page.locator(`.best-shots li[data-track-id="${id}"]`).scrollIntoViewIfNeeded();
      await page
        .locator(`.best-shots li[data-track-id="${id}"]:is([data-state="shown"], [data-state="none"])`)
        .waitFor({ timeout: 15_000 });
    }
    expect(await brokenImages(page)).toEqual([]);
    await screenshots(page, 'places-4-best-shots');
  }, 120_000);

  it("an ended task's rules are shown, not edited: no drawing, no save, and the API refuses a change", async () => {
    // The task ended (the first case read every event): the editor's buttons are gone and the panel says why.
    await page.locator('.stage.rules-locked').waitFor();
    for (const button of ['.add-zone', '.add-line', '.finish-zone', '.save-rules'])
      expect(await page.locator(`.places ${button}`).isVisible()).toBe(false);
    expect(await page.locator('.places .remove-rule:visible').count()).toBe(0);
    expect(await page.locator('.places .draw-hint').textContent()).toMatch(/the task has ended/);
    // Its rules stay drawn where the API put them.
    expect(await page.locator('.places-list li[data-rule="lane"]').count()).toBe(1);
    expect(await page.locator('.places-list li[data-rule="curb"]').count()).toBe(1);
    const refused = await api('PUT', `/v1/vision/tasks/${taskId}/rules`, { zones: [], lines: [] });
    expect(refused.status).toBe(409);
    expect((await rules()).rules_version).toBe(1);
    await screenshots(page, 'places-2-ended');
    expect(realErrors(errors)).toEqual([]);
  }, 120_000);
});
