import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CutProxy {
  /** Base URL of the proxy, e.g. http://127.0.0.1:1234 */
  url: string;
  /**
   * Loses the answer of the next request whose request line starts with `POST <pathPrefix>`: the
   * request is delivered and handled, then its connection is reset as the answer begins, so the
   * client never sees it (a network failure at the worst moment).
   */
  cutNextAnswer(pathPrefix: string): void;
  /** Answers lost so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

/** A TCP proxy to `target` (loopback) that can lose the answer of a chosen request. */
export async function startCutProxy(target: string): Promise<CutProxy> {
  const { hostname, port } = new URL(target);
  let armed: string | undefined;
  const sockets = new Set<net.Socket>();
  const state = { cuts: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let cutOnAnswer = false;
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.subarray(0, 200).toString('latin1').startsWith(`POST ${armed}`)) {
        armed = undefined;
        cutOnAnswer = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cutOnAnswer) {
        client.write(chunk);
        return;
      }
      state.cuts++;
      // A reset, not a clean close: the client sees the connection fail as the answer begins.
      client.resetAndDestroy();
      upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cutNextAnswer(pathPrefix: string) {
      armed = pathPrefix;
    },
    get cuts() {
      return state.cuts;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
