/**
 * Zones and lines in the web console, in chromium against the standalone stack: a file task's rules drawn over
 * its video where the API put them, its counts and its events on the timeline as the API answers them; a zone
 * and a line drawn with the mouse and a vertex dragged, each saved as a new rules version.
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

  /** Clicks the editor at a normalized point of the video. */
  async function clickAt(x: number, y: number): Promise<void> {
    const box = (await page.locator('.places-editor').boundingBox())!;
    await page.mouse.click(box.x + x * box.width, box.y + y * box.height);
  }

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

  it('a zone and a line drawn with the mouse and a dragged vertex are saved as new rules versions', async () => {
    await page.click('.places .add-zone');
    await clickAt(0.6, 0.1);
    await clickAt(0.9, 0.1);
    await clickAt(0.75, 0.4);
    await page.click('.places .finish-zone');
    await page.click('.places .save-rules');
    await page.locator('.places .rules-version[data-version="2"]').waitFor();
    const drawn = (await rules()).zones.find((z) => z.id === 'zone-1')!;
    const near = (got: number[][], want: number[][]) =>
      expect(
        got.every((p, i) => Math.abs(p[0] - want[i][0]) < 0.01 && Math.abs(p[1] - want[i][1]) < 0.01),
      ).toBe(true);
    expect(drawn.polygon).toHaveLength(3);
    near(drawn.polygon, [
      [0.6, 0.1],
      [0.9, 0.1],
      [0.75, 0.4],
    ]);

    // Drag the lane's first vertex from (0, 0.3) to (0.05, 0.25).
    const box = (await page.locator('.places-editor').boundingBox())!;
    // Read in the page in one step: the editor re-renders its handles (live counts, a saved version), so an
    // element may be replaced between a locator finding it and measuring it.
    const vertex = (await (
      await page.waitForFunction(() => {
        const r = document
          .querySelector('.places-handles .vertex[data-rule="lane"][data-index="0"]')
          ?.getBoundingClientRect();
        return r && { x: r.x, y: r.y, width: r.width, height: r.height };
      })
    ).jsonValue())!;
    await page.mouse.move(vertex.x + vertex.width / 2, vertex.y + vertex.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + 0.05 * box.width, box.y + 0.25 * box.height, { steps: 5 });
    await page.mouse.up();
    await page.click('.places .add-line');
    await clickAt(0.5, 0.9);
    await clickAt(0.9, 0.9);
    await page.click('.places .save-rules');
    await page.locator('.places .rules-version[data-version="3"]').waitFor();
    const after = await rules();
    near([after.zones.find((z) => z.id === 'lane')!.polygon[0]], [[0.05, 0.25]]);
    const drawnLine = after.lines.find((l) => l.id === 'line-1')!;
    near(
      [drawnLine.start, drawnLine.end],
      [
        [0.5, 0.9],
        [0.9, 0.9],
      ],
    );
    expect(after.lines.map((l) => l.id)).toEqual(['curb', 'line-1']);

    // Deleting a rule and saving leaves it out of the next version.
    await page.click('.places-list li[data-rule="zone-1"] .remove-rule');
    await page.click('.places .save-rules');
    await page.locator('.places .rules-version[data-version="4"]').waitFor();
    expect((await rules()).zones.map((z) => z.id)).toEqual(['lane']);
    // The changed zone's open visits ended with the save (zone.exited, rule_changed): the timeline reads them.
    const all = await waitFor(
      'every event after the changes',
      async () => {
        const r = await api('GET', `/v1/vision/tasks/${taskId}/events?limit=500`);
        return r.body.next_cursor === '' ? (r.body.items as { kind: string; reason?: string }[]) : undefined;
      },
      60_000,
    );
    expect(all.some((e) => e.kind === 'zone.exited' && e.reason === 'rule_changed')).toBe(true);
    await page.locator(`.events-timeline[data-events="${all.length}"][data-ended="true"]`).waitFor();
    expect(await page.locator('.event-mark[data-kind="zone.exited"]').count()).toBe(
      all.filter((e) => e.kind === 'zone.exited').length,
    );
    await screenshots(page, 'places-2-edited');
    expect(realErrors(errors)).toEqual([]);
  }, 120_000);
});
