import { streamResolver } from '@vision/shared';
import { checkLiveSource, startRelayFor } from '../src/jobs/live-connect';
import { resolveRedirects } from '../src/net/redirects';
import {
  type ConnectionCounter,
  type RebindingDns,
  startConnectionCounter,
  startRebindingDns,
} from '../../../test/helpers/rebinding-dns';

/**
 * DNS rebinding against a live job's (re)connect: the name server answers a public address first and
 * 127.0.0.1 after, and the system resolver knows the name (`localhost`) as loopback. No connection
 * may ever reach the loopback listener, on the first connect or any reconnect.
 */
const PUBLIC = '93.184.216.34';
let dns: RebindingDns;
let listener: ConnectionCounter;
beforeAll(async () => {
  // Two public answers: the check before the connect and the first hop of the redirect walk.
  dns = await startRebindingDns(PUBLIC, '127.0.0.1', 2);
  listener = await startConnectionCounter();
});
afterAll(async () => {
  await dns.close();
  await listener.close();
});

test.each([
  ['http', '/internal/admin?x=1'],
  ['https', '/internal/admin'],
  ['http', '/live/index.m3u8'],
  ['rtsp', '/cam'],
  ['rtmp', '/live/stream-key'],
])('a reconnect to %s %s connects only to the address that was checked', async (kind, path) => {
  const input = `${kind}://user:pw@localhost:${listener.port}${path}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    dns.reset();
    const before = listener.connections();
    const resolve = streamResolver({ servers: [dns.server], timeoutMs: 1000 });
    const check = await checkLiveSource(
      { input, kind: kind as 'http' | 'https' | 'rtsp' | 'rtmp', live: true, host: 'localhost' },
      { allowPrivate: false, resolve },
    );
    if (kind === 'rtsp' || kind === 'rtmp') {
      // The check resolves the public address; the relay ffmpeg would connect through dials only it.
      expect(check).toEqual({ kind: 'ok', pinned: PUBLIC });
      const relayed = await startRelayFor({ input, kind, live: true, host: 'localhost' }, PUBLIC);
      expect(relayed?.streamInput).toMatch(/^(rtsp|rtmp):\/\/user:pw@127\.0\.0\.1:/);
      await relayed?.relay.close();
    } else {
      // HTTP(S): the redirect walk dials the checked address, which does not answer.
      expect(check).toEqual({ kind: 'unreachable', reason: 'stream unreachable' });
    }
    expect(listener.connections() - before).toBe(0);
  }
});

test('the redirect walk dials the checked address even when the name now points elsewhere', async () => {
  dns.reset();
  const before = listener.connections();
  const resolve = streamResolver({ servers: [dns.server], timeoutMs: 1000 });
  const r = await resolveRedirects(`http://localhost:${listener.port}/a`, {
    allowPrivate: false,
    resolve,
    timeoutMs: 1500,
  });
  expect(r).toMatchObject({ ok: false, refused: false, reason: 'stream unreachable' });
  expect(listener.connections() - before).toBe(0);
});
