import { streamResolver } from '@vision/shared';
import { probeStream } from '../src/probe/ffprobe';
import { guardStreamUrl } from '../src/probe/stream-guard';
import { parseStreamUrl } from '../src/domain/stream-url';
import {
  type ConnectionCounter,
  type RebindingDns,
  startConnectionCounter,
  startRebindingDns,
} from '../../../test/helpers/rebinding-dns';

/**
 * DNS rebinding against the stream probe: the name server answers a public address first and
 * 127.0.0.1 after, and the system resolver knows the name (`localhost`) as loopback. Whatever the
 * scheme, no connection may ever reach the loopback listener.
 */
const PUBLIC = '93.184.216.34';
let dns: RebindingDns;
let listener: ConnectionCounter;
beforeAll(async () => {
  dns = await startRebindingDns(PUBLIC, '127.0.0.1');
  listener = await startConnectionCounter();
});
afterAll(async () => {
  await dns.close();
  await listener.close();
});

const urlFor = (scheme: string, path: string): string =>
  `${scheme}://user:pw@localhost:${listener.port}${path}`;

test.each([
  ['http', '/internal/admin?x=1'],
  ['https', '/internal/admin'],
  ['http', '/live/index.m3u8'],
  ['rtsp', '/cam'],
  ['rtmp', '/live/stream-key'],
])('the %s probe of %s connects only to the address that was checked', async (scheme, path) => {
  dns.reset();
  const before = listener.connections();
  const parsed = parseStreamUrl(urlFor(scheme, path));
  if (!parsed.ok) throw new Error(parsed.problem);
  const resolve = streamResolver({ servers: [dns.server], timeoutMs: 1000 });
  const guard = await guardStreamUrl(parsed.url, { allowPrivate: false, timeoutMs: 1500, resolve });
  if (scheme === 'rtsp' || scheme === 'rtmp') {
    // The check resolves the public address and passes; the probe dials that address through the
    // pinned relay, never the name again (which now points at the listener).
    expect(guard).toMatchObject({ ok: true, addresses: [PUBLIC] });
    if (!guard.ok) return;
    // A deadline ffprobe cannot miss on a loaded machine: the answer must come from the relay's refusal
    // (ffprobe's own exit), not from the probe giving up first ("no video found in time").
    const probed = await probeStream(guard.url.href, guard.url.scheme, {
      timeoutMs: 15_000,
      pin: guard.addresses[0],
      port: guard.url.port,
    });
    expect(probed).toMatchObject({ ok: false, problem: 'stream could not be opened' });
  } else {
    // HTTP(S): the check's own request dials the address it resolved, which does not answer; the
    // caller hears that it could not be reached, never what answered.
    expect(guard).toEqual({
      ok: false,
      reason: 'stream_unreachable',
      problem: 'stream_url could not be reached',
    });
  }
  expect(listener.connections() - before).toBe(0);
});
