/**
 * Zones and lines in the web console, in chromium against the standalone stack: a file task's rules drawn over
 * its video where the API put them, its counts and its events on the timeline as the API answers them; once the
 * task has ended its rules are shown but not edited (drawing and saving on a running task: places-live.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { CURB, LEFT_LANE, PARKING_LOT } from '../helpers/places';
import { startStandaloneStack, type TestStack } from '../helpers/stack';
import { waitFor } from '../helpers/media-server';
import { enterKey, launchChromium, newContext, screenshots, watchErrors } from './support';

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
    const form = new FormData();
    form.append('scene_code', 'person_vehicle');
    form.append('zones', JSON.stringify([LANE]));
    form.append('lines', JSON.stringify([CURB]));
    form.append('file', new Blob([readFileSync(PARKING)]), 'lot.mp4');
    const created = await stack.api('POST', '/v1/vision/video-tasks', {
      key: KEY,
      headers: { 'idempotency-key': randomUUID() },
      body: form,
    });
    expect(created.status).toBe(201);
    taskId = created.body.task_id as string;
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
