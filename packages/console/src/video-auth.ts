/**
 * How the player gets a task's uploaded video with the key: through the service worker (sw.ts), which
 * adds `Authorization: Bearer` to the player's ranged requests; where no worker can run (a page served
 * over plain HTTP from another host is not a secure context) the file is downloaded whole into a Blob.
 */
import { ApiFailure, getKey } from './api.js';
import { KEY_REQUEST } from './messages.js';

export const videoPath = (taskId: string): string => `/v1/vision/tasks/${encodeURIComponent(taskId)}/video`;

/** Answers the worker's requests for the key (from sessionStorage, at the time of each request). */
export function answerKeyRequests(): void {
  const container = navigator.serviceWorker as ServiceWorkerContainer | undefined;
  if (!container) return;
  container.addEventListener('message', (e: MessageEvent<unknown>) => {
    const data = e.data as { type?: unknown } | null;
    if (data && data.type === KEY_REQUEST && e.ports[0]) e.ports[0].postMessage(getKey());
  });
  container.startMessages();
}

let registration: Promise<boolean> | undefined;

/** Registers the worker once; resolves true when it controls this page. */
export function registerVideoWorker(): Promise<boolean> {
  if (!registration) {
    // A browser that blocks workers may leave register() pending for ever: give up after a while.
    const giveUp = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 8000));
    const attempt = (async () => {
      const container = navigator.serviceWorker as ServiceWorkerContainer | undefined;
      if (!container || !isSecureContext) return false;
      try {
        await container.register('./sw.js', { scope: './', type: 'module' });
        await container.ready;
        if (container.controller) return true;
        // The worker claims open pages when it activates.
        return await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(Boolean(container.controller)), 5000);
          container.addEventListener('controllerchange', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
      } catch {
        return false;
      }
    })();
    registration = Promise.race([attempt, giveUp]);
  }
  return registration;
}

/** Whether the task has a stored upload (a file task): HEAD on the download endpoint. */
export async function hasUpload(taskId: string): Promise<boolean> {
  const res = await fetch(videoPath(taskId), {
    method: 'HEAD',
    headers: { authorization: `Bearer ${getKey()}` },
    credentials: 'omit',
    cache: 'no-store',
  });
  return res.ok;
}

/**
 * A `src` for the player: the endpoint itself when the worker is in control, else an object URL of the
 * whole file downloaded with the key (`onProgress(received, total)`). `release` frees the object URL.
 */
export async function videoSource(
  taskId: string,
  onProgress: (received: number, total: number) => void,
): Promise<{ src: string; mode: 'worker' | 'download'; release(): void }> {
  if (await registerVideoWorker())
    return { src: videoPath(taskId), mode: 'worker', release: () => undefined };
  const res = await fetch(videoPath(taskId), {
    headers: { authorization: `Bearer ${getKey()}` },
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!res.ok || !res.body)
    throw new ApiFailure(res.status, `HTTP-${res.status}`, 'The video could not be loaded');
  const total = Number(res.headers.get('content-length') ?? 0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    received += value.length;
    onProgress(received, total);
  }
  const url = URL.createObjectURL(
    new Blob(parts as BlobPart[], { type: res.headers.get('content-type') ?? 'video/mp4' }),
  );
  return { src: url, mode: 'download', release: () => URL.revokeObjectURL(url) };
}
