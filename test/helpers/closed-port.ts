import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A loopback port on which nothing listens (a server bound there, then closed): a connection to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
