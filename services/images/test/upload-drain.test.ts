import { REASON } from '@vision/shared';
/**
 * A multipart body refused early (an unexpected field first) is still read to its end (up to the body
 * bound) after the 400: the client's upload completes and the connection is not left stalled. A raw
 * TCP client is used so that what is observed is the server's reading, not an HTTP client's policy.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { IDENTITY_HEADER, identityHeader, startStack, type Stack } from './harness';

jest.setTimeout(60_000);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ inference: 'fake' });
});
afterAll(async () => {
  await stack?.close();
});

test('an early 400 drains the rest of a large body: the upload finishes and the answer arrives', async () => {
  const boundary = 'drain-boundary-0123';
  const url = new URL(stack.images.url);
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="other"; filename="a.jpg"\r\n` +
      'Content-Type: image/jpeg\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const fileBytes = 40 * 1024 * 1024; // well past the socket buffers, below the 81 MiB body bound
  const length = head.length + fileBytes + tail.length;

  const outcome = await new Promise<{ response: string; uploaded: number }>((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let response = '';
    let uploaded = 0;
    let flushed = false;
    // Liveness bound only: without the drain the server stops reading and the upload stalls for good.
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the upload stalled after ${uploaded} bytes`));
    }, 30_000);
    const settle = () => {
      if (flushed && /\r\n\r\n[\s\S]*\}$/.test(response)) {
        clearTimeout(timer);
        socket.destroy();
        resolve({ response, uploaded });
      }
    };
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      response += d;
      settle();
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(
      `POST /v1/vision/image-detections HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `${IDENTITY_HEADER}: ${identityHeader('drainer')}\r\nIdempotency-Key: ${randomUUID()}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`,
    );
    socket.write(head);
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const pump = () => {
      while (uploaded < fileBytes) {
        uploaded += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      socket.write(tail, () => {
        flushed = true;
        settle();
      });
    };
    pump();
  });
  expect(outcome.uploaded).toBe(fileBytes);
  expect(outcome.response).toMatch(/^HTTP\/1\.1 400 /);
  const body = JSON.parse(outcome.response.slice(outcome.response.indexOf('\r\n\r\n') + 4));
  expect(body.error.details.reason).toBe(REASON.unknown_field);
});
