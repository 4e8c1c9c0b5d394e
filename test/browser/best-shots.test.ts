/**
 * The Tracks panel in chromium against the standalone stack, on the 10 s pedestrian clip as a file task with one
 * zone: people of a wide surveillance view, a few pixels wide. Every track the result frames name a best shot for
 * has a tile with its label and times, and a picture that loads; a tile without one says why; no <img> of the page
 * is left broken.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { MEDIA, startStandaloneStack, type TestStack } from '../helpers/stack';
import { waitFor } from '../helpers/media-server';
import { uploadVideoTask } from '../helpers/uploads';
import { brokenImages, enterKey, launchChromium, newContext, screenshots, watchErrors } from './support';

const KEY = 'browser-best-shots-key-0123456789';
const CLIP = path.join(MEDIA, 'videos', 'pedestrians_vtest_opencv_10s.mov');
const PLAZA = {
  id: 'plaza',
  polygon: [
    [0, 0],
    [1, 0],
    [1, 1],
    [0, 1],
  ],
};

interface Tracked {
  label: string;
  track_id?: string;
  best_shot_path?: string;
}

const realErrors = (errors: string[]) => errors.filter((e) => !e.includes('Failed to load resource'));

describe('the tracks of a task in the web console', () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let taskId = '';

  const api = (method: string, urlPath: string) => stack.api(method, urlPath, { key: KEY });

  beforeAll(async () => {
    stack = await startStandaloneStack({ keys: `${KEY}:tracks`, env: { TASKS_POLL_INTERVAL_MS: '500' } });
    browser = await launchChromium();
    page = await (await newContext(browser)).newPage();
    errors = watchErrors(page);
    taskId = await uploadVideoTask(stack, KEY, CLIP, 'plaza.mov', { zones: JSON.stringify([PLAZA]) });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('every track has a tile with its label, its times and a picture that loads: no empty tile', async () => {
    const status = await waitFor(
      'the task evaluated to its end',
      async () => {
        const task = (await api('GET', `/v1/vision/tasks/${taskId}`)).body as { status: string };
        if (['queued', 'running'].includes(task.status)) return undefined;
        const events = await api('GET', `/v1/vision/tasks/${taskId}/events?limit=500`);
        return events.body.next_cursor === '' ? task.status : undefined;
      },
      180_000,
    );
    expect(status).toBe('succeeded');
    // The frames as the console reads them: at the task's threshold.
    const frames = (await api('GET', `/v1/vision/tasks/${taskId}/results?limit=500`)).body.items as {
      objects: Tracked[];
    }[];
    const tracks = new Map<string, Tracked>();
    for (const o of frames.flatMap((f) => f.objects))
      if (o.track_id !== undefined && o.best_shot_path) tracks.set(o.track_id, o);
    // People walk across the plaza: tracks, most of them small.
    expect(tracks.size).toBeGreaterThanOrEqual(5);

    await enterKey(page, stack.url, KEY, `#/tasks/${encodeURIComponent(taskId)}`);
    await page.locator(`.best-shots[data-tracks="${tracks.size}"]`).waitFor({ timeout: 30_000 });
    for (const [id, o] of tracks) {
      const tile = page.locator(`.best-shots li[data-track-id="${id}"]`);
      await tile.scrollIntoViewIfNeeded();
      await page
        .locator(`.best-shots li[data-track-id="${id}"]:is([data-state="shown"], [data-state="none"])`)
        .waitFor({ timeout: 15_000 });
      expect(await tile.textContent()).toContain(`${o.label} · track ${id}`);
      expect(await tile.locator('.best-shot-time').textContent()).toMatch(/^\d+:\d{2}\.\d{3}/);
      // A file task's frames can all be pictured: every track's picture is there, and shown.
      expect([id, await tile.getAttribute('data-state')]).toEqual([id, 'shown']);
      const img = tile.locator('img.best-shot-img[data-state="loaded"]');
      expect(await img.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    }
    expect(await brokenImages(page)).toEqual([]);
    // The check sees an image that does not load.
    await page.evaluate(() => {
      const probe = document.createElement('img');
      probe.className = 'probe';
      probe.src = 'data:image/jpeg;base64,AAAA';
      document.body.append(probe);
    });
    await page.waitForFunction(
      () => document.querySelector<HTMLImageElement>('img.probe')?.complete === true,
    );
    expect(await brokenImages(page)).toEqual([expect.stringMatching(/^probe data:image\/jpeg/)]);
    await page.evaluate(() => document.querySelector('img.probe')?.remove());
    await screenshots(page, 'tracks-1-best-shots');
    expect(realErrors(errors)).toEqual([]);
  }, 300_000);

  it('a track whose picture cannot be read says why in its tile', async () => {
    // A route answers every best shot as the service answers for a track without a picture.
    await page.route('**/best_shot?crop=true', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({
          error: {
            code: 'OP-TASK-NO-SNAPSHOT',
            message: 'No picture: frame_gone',
            request_id: 'r',
            details: { snapshot_reason: 'frame_gone' },
          },
        }),
      }),
    );
    await page.reload();
    const first = page.locator('.best-shots li').first();
    await first.scrollIntoViewIfNeeded();
    await page.locator('.best-shots li[data-state="none"]').first().waitFor({ timeout: 15_000 });
    const tile = page.locator('.best-shots li[data-state="none"]').first();
    expect(await tile.locator('.no-picture').getAttribute('data-reason')).toBe('frame_gone');
    expect(await tile.locator('.no-picture').textContent()).toMatch(/no picture: its frame had already left/);
    // No image stands in its place: nothing broken, nothing black.
    expect(await tile.locator('img').count()).toBe(0);
    expect(await brokenImages(page)).toEqual([]);
    await screenshots(page, 'tracks-2-no-picture');
    await page.unroute('**/best_shot?crop=true');
  }, 120_000);
});
