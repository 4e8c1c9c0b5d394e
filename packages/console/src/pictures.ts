/**
 * Pictures read with the key: an <img> cannot send `Authorization`, so each picture (an event's snapshot or
 * crop, a track's best shot) is fetched with it and shown as an object URL. Pictures load lazily, when their
 * image scrolls near the view; each path is read once per page and its URL freed when the page is left. A click
 * on a thumbnail opens the full picture in a dialog.
 */
import { ApiFailure, apiBlob } from './api.js';
import { h } from './dom.js';

/** What became of a picture: shown (with the rule a best shot's box met), or not, and why. */
export type PictureOutcome =
  { shown: true; rule?: string } | { shown: false; code: string; reason?: string; message: string };

export interface Pictures {
  /**
   * Shows the picture at `path` in `img` once `img` comes near the view; its `data-alt` becomes its alt then.
   * `settled` hears whether it was shown (an image that did not load is not).
   */
  lazy(img: HTMLImageElement, path: string, settled?: (o: PictureOutcome) => void): void;
  /** Stops waiting to show a picture in `img` (it left the page). */
  release(img: HTMLImageElement): void;
  /** Opens the picture at `path` in the dialog, with `caption` over it. */
  open(path: string, caption: string): void;
  /** Forgets the picture read at `path` (one that changes, such as a best shot): the next show reads it again. */
  forget(path: string): void;
  /** The dialog (appended once to the page). */
  dialog: HTMLDialogElement;
  dispose(): void;
}

interface Read {
  url: string;
  /** A best shot's `X-Best-Shot-Rule`. */
  rule?: string;
}

const outcomeOf = (err: unknown): PictureOutcome => {
  const reason = err instanceof ApiFailure ? err.details?.snapshot_reason : undefined;
  return {
    shown: false,
    code: err instanceof ApiFailure ? err.code : 'ERROR',
    ...(typeof reason === 'string' ? { reason } : {}),
    message: err instanceof Error ? err.message : String(err),
  };
};

export function createPictures(): Pictures {
  const urls = new Map<string, Promise<Read>>();
  const waiting = new Map<Element, { path: string; settled?: (o: PictureOutcome) => void }>();
  const aborts = new AbortController();
  let gone = false;

  /** The object URL of `path`, read once. */
  const urlOf = (path: string): Promise<Read> => {
    let url = urls.get(path);
    if (!url) {
      url = apiBlob(path, aborts.signal).then(({ blob, headers }) => {
        const rule = headers.get('x-best-shot-rule');
        return { url: URL.createObjectURL(blob), ...(rule ? { rule } : {}) };
      });
      // A failed read is tried again the next time the picture is asked for.
      url.catch(() => urls.delete(path));
      urls.set(path, url);
    }
    return url;
  };

  const show = (img: HTMLImageElement, path: string, settled?: (o: PictureOutcome) => void) => {
    img.dataset.state = 'loading';
    urlOf(path).then(
      ({ url, rule }) => {
        // Gone, or the image was given another picture meanwhile.
        if (gone || img.dataset.path !== path) return;
        img.addEventListener(
          'load',
          () => {
            img.dataset.state = 'loaded';
            // Said once there is a picture: an image waiting for its picture shows nothing.
            if (img.dataset.alt) img.alt = img.dataset.alt;
            settled?.({ shown: true, ...(rule ? { rule } : {}) });
          },
          { once: true },
        );
        img.addEventListener(
          'error',
          () => {
            img.dataset.state = 'failed';
            settled?.({ shown: false, code: 'UNREADABLE', message: 'The picture could not be shown' });
          },
          { once: true },
        );
        img.src = url;
      },
      (err: unknown) => {
        if (gone || img.dataset.path !== path) return;
        settled?.(outcomeOf(err));
        img.dataset.state = 'failed';
        img.dataset.code = err instanceof ApiFailure ? err.code : 'ERROR';
        img.title = err instanceof Error ? err.message : String(err);
        // What shows in the image's place.
        img.alt =
          err instanceof ApiFailure && err.code === 'OP-TASK-NO-SNAPSHOT' ? 'no picture yet' : 'no picture';
      },
    );
  };

  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        const w = waiting.get(entry.target);
        observer.unobserve(entry.target);
        waiting.delete(entry.target);
        if (w !== undefined) show(entry.target as HTMLImageElement, w.path, w.settled);
      }
    },
    { rootMargin: '200px' },
  );

  const full = h('img', { class: 'picture-full', alt: '' });
  const caption = h('p', { class: 'muted picture-caption' });
  const close = h('button', { type: 'button', class: 'picture-close' }, 'Close');
  const dialog = h(
    'dialog',
    { class: 'picture-dialog', 'aria-label': 'picture of the event' },
    h('div', { class: 'row spread' }, caption, close),
    full,
  );
  close.addEventListener('click', () => dialog.close());
  // A click on the backdrop (outside the picture's box) closes it too.
  dialog.addEventListener('click', (e) => {
    if (e.target === dialog) dialog.close();
  });

  return {
    dialog,
    lazy(img, path, settled) {
      img.dataset.path = path;
      img.dataset.state = 'waiting';
      waiting.set(img, { path, ...(settled ? { settled } : {}) });
      observer.observe(img);
    },
    release(img) {
      observer.unobserve(img);
      waiting.delete(img);
    },
    open(path, text) {
      caption.textContent = text;
      full.removeAttribute('src');
      full.alt = '';
      full.dataset.alt = text;
      full.dataset.path = path;
      show(full, path);
      if (!dialog.open) dialog.showModal();
    },
    forget(path) {
      const url = urls.get(path);
      urls.delete(path);
      url?.then((r) => URL.revokeObjectURL(r.url)).catch(() => undefined);
    },
    dispose() {
      gone = true;
      observer.disconnect();
      waiting.clear();
      aborts.abort();
      if (dialog.open) dialog.close();
      for (const url of urls.values()) url.then((r) => URL.revokeObjectURL(r.url)).catch(() => undefined);
      urls.clear();
    },
  };
}
