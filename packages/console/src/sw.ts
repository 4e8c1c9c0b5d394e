/**
 * The console's service worker. A <video> element cannot send an Authorization header, so this worker
 * adds it to the player's requests for a task's uploaded video (and only those), asking the page that
 * made the request for the key each time; the key is never stored here. Range headers pass through,
 * so the player seeks with HTTP ranges.
 */
import { KEY_REQUEST } from './messages.js';

interface ExtendableEventLike extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEventLike extends ExtendableEventLike {
  readonly request: Request;
  readonly clientId: string;
  respondWith(r: Promise<Response>): void;
}
interface ClientLike {
  postMessage(message: unknown, transfer: Transferable[]): void;
}
interface WorkerScope {
  readonly location: Location;
  readonly clients: { get(id: string): Promise<ClientLike | undefined>; claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', listener: (e: ExtendableEventLike) => void): void;
  addEventListener(type: 'fetch', listener: (e: FetchEventLike) => void): void;
}

const scope = self as unknown as WorkerScope;
const VIDEO_PATH = /^\/v1\/vision\/tasks\/[A-Za-z0-9._:-]{1,64}\/video$/;

scope.addEventListener('install', (e) => e.waitUntil(scope.skipWaiting()));
scope.addEventListener('activate', (e) => e.waitUntil(scope.clients.claim()));

function keyOf(clientId: string): Promise<string | undefined> {
  return scope.clients.get(clientId).then(
    (client) =>
      new Promise<string | undefined>((resolve) => {
        if (!client) return resolve(undefined);
        const channel = new MessageChannel();
        const timer = setTimeout(() => resolve(undefined), 3000);
        channel.port1.onmessage = (m: MessageEvent<unknown>) => {
          clearTimeout(timer);
          resolve(typeof m.data === 'string' && m.data ? m.data : undefined);
        };
        client.postMessage({ type: KEY_REQUEST }, [channel.port2]);
      }),
  );
}

async function withKey(e: FetchEventLike): Promise<Response> {
  const key = await keyOf(e.clientId);
  const headers = new Headers();
  const range = e.request.headers.get('range');
  if (range) headers.set('range', range);
  if (key) headers.set('authorization', `Bearer ${key}`);
  return fetch(e.request.url, { headers, credentials: 'omit', cache: 'no-store', signal: e.request.signal });
}

scope.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (url.origin !== scope.location.origin || e.request.method !== 'GET' || !VIDEO_PATH.test(url.pathname))
    return;
  e.respondWith(withKey(e));
});
