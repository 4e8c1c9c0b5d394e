import { randomUUID } from 'node:crypto';
import { STATUS_CODES, maxHeaderSize, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, toEnvelope } from '../contract/errors';
import { REASON } from '../contract/reasons';

/**
 * The answer to a request Node's HTTP parser refused before any route could see it (a server's
 * `clientError`). Node's own answers are bare: 431 with no body for a request line and headers over
 * `maxHeaderSize` (16 KiB), 400 with no body for anything else it cannot parse. A caller of this API gets
 * the error envelope instead: 400 OP-TASK-REQUEST-INVALID, `details.reason` `malformed_request` (a request
 * target over 8 KiB that Node does parse gets 400 `invalid_path` from requestShapeGuard). A head cut off
 * by the server's headers timeout keeps Node's 408. Returns the raw HTTP/1.1 response, or undefined when
 * nothing should be written (the connection was reset, or an answer was already under way).
 */
export function unparsableRequestAnswer(code: string | undefined): string | undefined {
  if (code === 'ECONNRESET') return undefined;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
  const err =
    code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError(
          'OP-TASK-REQUEST-INVALID',
          `The request line and headers exceed ${maxHeaderSize} bytes`,
          { reason: REASON.malformed_request, limit: maxHeaderSize },
        )
      : new ApiError('OP-TASK-REQUEST-INVALID', 'The request could not be parsed as HTTP/1.1', {
          reason: REASON.malformed_request,
        });
  const id = randomUUID();
  const body = JSON.stringify(toEnvelope(err, id));
  return [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${id}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * A server's `clientError` listener: writes unparsableRequestAnswer, then closes the connection. As Node's
 * own handler does, it answers only while no response on this connection has begun (a keep-alive
 * connection between requests has none in flight), so that it never corrupts one half written.
 */
export function answerUnparsableRequest(err: NodeJS.ErrnoException, socket: Duplex): void {
  // `_httpMessage`: the response in flight on the connection, where Node's handler looks for it too.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  const answer = socket.writable && !inFlight?.headersSent ? unparsableRequestAnswer(err.code) : undefined;
  if (!answer) {
    socket.destroy();
    return;
  }
  socket.once('finish', () => socket.destroy());
  socket.end(answer);
}
