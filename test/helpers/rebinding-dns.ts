/**
 * A name server on loopback for tests of pinned egress: it answers the first `firstAnswers` A
 * questions for a name with `first` and every later one with `after` (DNS rebinding). AAAA questions get no
 * answer. Alongside it, a loopback TCP listener counts every connection that reaches it.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface RebindingDns {
  /** `127.0.0.1:port`, for streamResolver's `servers`. */
  server: string;
  /** How many A questions were answered. */
  questions: () => number;
  /** Forgets which names were asked: the next questions get `first` again. */
  reset: () => void;
  close: () => Promise<void>;
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map((p) => Number(p)));
}

export async function startRebindingDns(
  first: string,
  after: string,
  firstAnswers = 1,
): Promise<RebindingDns> {
  const socket = dgram.createSocket('udp4');
  const asked = new Map<string, number>();
  let answered = 0;
  socket.on('message', (msg, rinfo) => {
    if (msg.length < 12) return;
    let at = 12;
    const labels: string[] = [];
    while (at < msg.length && msg[at] !== 0) {
      labels.push(msg.subarray(at + 1, at + 1 + msg[at]).toString('latin1'));
      at += msg[at] + 1;
    }
    const questionEnd = at + 5;
    if (questionEnd > msg.length) return;
    const qtype = msg.readUInt16BE(at + 1);
    const name = labels.join('.').toLowerCase();
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180, 2);
    header.writeUInt16BE(1, 4);
    const parts = [header, msg.subarray(12, questionEnd)];
    if (qtype === 1) {
      const times = asked.get(name) ?? 0;
      const address = times < firstAnswers ? first : after;
      asked.set(name, times + 1);
      answered++;
      header.writeUInt16BE(1, 6);
      const answer = Buffer.alloc(16);
      answer.writeUInt16BE(0xc00c, 0);
      answer.writeUInt16BE(1, 2);
      answer.writeUInt16BE(1, 4);
      answer.writeUInt32BE(0, 6);
      answer.writeUInt16BE(4, 10);
      ipv4Bytes(address).copy(answer, 12);
      parts.push(answer);
    }
    socket.send(Buffer.concat(parts), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    server: `127.0.0.1:${port}`,
    questions: () => answered,
    reset: () => asked.clear(),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

export interface ConnectionCounter {
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}

/** A TCP listener on 127.0.0.1 that counts (and drops) every connection. */
export async function startConnectionCounter(port = 0): Promise<ConnectionCounter> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
