/**
 * A refused connection delivered nothing, so an internal call sends it once more at once on a new connection (in a
 * rollout a Kubernetes Service gives that one to another endpoint). A stream body is never sent twice, and a call
 * refused again fails as one that reached nothing.
 */
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import { Readable } from 'node:stream';
import { ServiceClient, UnreachableError } from '../src/calls/service-client';
import { closedPort } from '../../../test/helpers/closed-port';
import { signerOf } from '../../../test/helpers/identity';

const identity = { subject: 'acme', requestId: 'req-1' };

const refusingUrl = async () => `http://127.0.0.1:${await closedPort()}`;

describe('a refused internal call', () => {
  let refused = 0;
  const onRefused = () => refused++;
  beforeAll(() => diagnostics.subscribe('undici:client:connectError', onRefused));
  afterAll(() => diagnostics.unsubscribe('undici:client:connectError', onRefused));
  beforeEach(() => {
    refused = 0;
  });

  it('is sent once more on a new connection, then fails as delivered nowhere', async () => {
    const client = new ServiceClient('quota', await refusingUrl(), signerOf('tasks'));
    const err = await client.call('/internal/v1/charges', { identity, json: { units: 1 } }).catch((e) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect({ timedOut: err.timedOut, maybeDelivered: err.maybeDelivered, refused }).toEqual({
      timedOut: false,
      maybeDelivered: false,
      refused: 2,
    });
  });

  it('with a stream body, is not sent again', async () => {
    const client = new ServiceClient('tasks', await refusingUrl(), signerOf('gateway'));
    const err = await client
      .call('/internal/v1/uploads', { identity, body: Readable.from([Buffer.from('frame')]) })
      .catch((e) => e);
    expect(err).toBeInstanceOf(UnreachableError);
    expect(refused).toBe(1);
  });

  it('answered on the second connection, returns that answer', async () => {
    const url = await refusingUrl();
    const { port } = new URL(url);
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    // The endpoint comes back between the two connections, as another pod would take the second.
    const listening = new Promise<void>((resolve) => {
      const start = () => {
        diagnostics.unsubscribe('undici:client:connectError', start);
        server.listen(Number(port), '127.0.0.1', () => resolve());
      };
      diagnostics.subscribe('undici:client:connectError', start);
    });
    const client = new ServiceClient('quota', url, signerOf('tasks'));
    try {
      const call = client.call('/internal/v1/charges', { identity, json: { units: 1 } });
      await listening;
      const r = await call;
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { ok: true } });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
