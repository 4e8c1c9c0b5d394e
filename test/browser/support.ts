/**
 * Browser-test helpers: Debian's chromium driven by playwright-core (never a downloaded browser),
 * screenshots kept as test artifacts, and pixel reads of element screenshots.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { PNG } from 'pngjs';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where screenshots of every page go (gitignored): CONSOLE_SCREENSHOTS_DIR or test-artifacts/console. */
export const SCREENSHOTS =
  process.env.CONSOLE_SCREENSHOTS_DIR ?? path.resolve(__dirname, '../../test-artifacts/console');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  mkdirSync(SCREENSHOTS, { recursive: true });
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export async function newContext(
  browser: Browser,
  opts: { phone?: boolean; serviceWorkers?: 'allow' | 'block' } = {},
): Promise<BrowserContext> {
  return browser.newContext({
    viewport: opts.phone ? PHONE : DESKTOP,
    deviceScaleFactor: 1,
    isMobile: opts.phone ?? false,
    hasTouch: opts.phone ?? false,
    serviceWorkers: opts.serviceWorkers ?? 'allow',
  });
}

/** Collects uncaught page errors and console errors (CSP violations show up there). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** Throws when the page is wider than its viewport (a phone would have to scroll sideways). */
async function expectNoSidewaysScroll(page: Page, name: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  if (scrollWidth > innerWidth)
    throw new Error(`${name}: the page is ${scrollWidth} px wide in a ${innerWidth} px viewport`);
}

/**
 * A full-page screenshot at the page's current viewport, then the same at phone size; at both sizes
 * the page fits its width.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  const size = page.viewportSize() ?? DESKTOP;
  await expectNoSidewaysScroll(page, name);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-1280x800.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(300);
  await expectNoSidewaysScroll(page, `${name} (phone)`);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
  await page.waitForTimeout(300);
}

export async function enterKey(page: Page, baseUrl: string, key: string, hash = ''): Promise<void> {
  await page.goto(`${baseUrl}/console/${hash}`);
  await page.fill('#key-input', key);
  await page.click('#key-form button[type=submit]');
}

export interface Pixels {
  width: number;
  height: number;
  at(x: number, y: number): [number, number, number];
}

export async function pixelsOf(locator: Locator): Promise<Pixels> {
  const png = PNG.sync.read(await locator.screenshot({ animations: 'disabled' }));
  return {
    width: png.width,
    height: png.height,
    at(x, y) {
      const i = (Math.round(y) * png.width + Math.round(x)) * 4;
      return [png.data[i], png.data[i + 1], png.data[i + 2]];
    },
  };
}

export function rgbOf(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export const colourDistance = (a: readonly number[], b: readonly number[]) =>
  Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/**
 * The images of the page that did not load: one with a source that is not a decoded picture, or one whose
 * picture could not be read (`data-state="failed"`). An image still waiting for its picture is not counted; one
 * being read or decoded (an event's thumbnail that a scroll or a reload has just brought into view) is waited
 * for, up to `settleMs`, and counted if it is still not there.
 */
export async function brokenImages(page: Page, settleMs = 15_000): Promise<string[]> {
  await page
    .waitForFunction(
      () =>
        [...document.images].every(
          (i) => i.dataset.state !== 'loading' && (i.getAttribute('src') === null || i.complete),
        ),
      undefined,
      { timeout: settleMs },
    )
    .catch(() => undefined); // still loading: reported below as not loaded
  return page.evaluate(() =>
    [...document.images]
      .filter(
        (i) =>
          i.dataset.state === 'failed' ||
          i.dataset.state === 'loading' ||
          (i.getAttribute('src') !== null && (!i.complete || i.naturalWidth === 0)),
      )
      .map((i) => `${i.className} ${i.dataset.path ?? i.src}`),
  );
}
