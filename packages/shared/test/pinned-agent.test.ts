/**
 * The pinned agent dials only the addresses it was given, whatever the URL's host name resolves to,
 * and still speaks to the host by its name (Host header).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pinnedFetch, pinnedLookup } from '../src/egress/pinned-agent';

type Answer = { err: NodeJS.ErrnoException | null; address: unknown; family?: number };
const ask = (addresses: string[], options: { all?: boolean; family?: number }): Promise<Answer> =>
  new Promise((resolve) =>
    pinnedLookup(addresses)('anything.example', options, (err, address, family) =>
      resolve({ err, address, family }),
    ),
  );

describe('pinnedLookup', () => {
  it('answers with the checked addresses only, by family', async () => {
    const both = ['203.0.113.7', '2001:db8::7'];
    expect(await ask(both, {})).toMatchObject({ err: null, address: '203.0.113.7', family: 4 });
    expect(await ask(both, { family: 6 })).toMatchObject({ err: null, address: '2001:db8::7', family: 6 });
    expect(await ask(both, { all: true })).toMatchObject({
      err: null,
      address: [
        { address: '203.0.113.7', family: 4 },
        { address: '2001:db8::7', family: 6 },
      ],
    });
  });

  it('fails when nothing fits, and never falls back to a resolver', async () => {
    expect((await ask([], {})).err?.code).toBe('ENOTFOUND');
    expect((await ask(['not-an-address'], {})).err?.code).toBe('ENOTFOUND');
    expect((await ask(['203.0.113.7'], { family: 6 })).err?.code).toBe('ENOTFOUND');
  });
});

describe('pinnedFetch', () => {
  let server: http.Server;
  let port = 0;
  const hosts: (string | undefined)[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hosts.push(req.headers.host);
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('connects to the pinned address under the URL host name', async () => {
    const { response, close } = await pinnedFetch(`http://stream.example:${port}/x`, ['127.0.0.1']);
    expect(await response.text()).toBe('ok');
    await close();
    expect(hosts).toEqual([`stream.example:${port}`]);
  });

  it('never resolves the name itself: with no checked address, localhost is not dialled', async () => {
    hosts.length = 0;
    await expect(
      pinnedFetch(`http://localhost:${port}/x`, [], { signal: AbortSignal.timeout(2000) }),
    ).rejects.toThrow();
    expect(hosts).toEqual([]);
  });
});
