import { maxHeaderSize } from 'node:http';
import { unparsableRequestAnswer } from '../../src';

/** Splits a raw HTTP/1.1 answer into its status, headers and JSON body. */
function parse(raw: string) {
  const [head, body] = raw.split('\r\n\r\n');
  const [status, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return {
    status,
    headers,
    body: body ? (JSON.parse(body) as { error: Record<string, unknown> }) : undefined,
  };
}

describe('unparsableRequestAnswer', () => {
  it('answers a head over the limit with 400 and the error envelope, not a bare 431', () => {
    const { status, headers, body } = parse(unparsableRequestAnswer('HPE_HEADER_OVERFLOW') as string);
    expect(status).toBe('HTTP/1.1 400 Bad Request');
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers.connection).toBe('close');
    expect(body?.error).toMatchObject({
      code: 'OP-TASK-REQUEST-INVALID',
      details: { reason: 'malformed_request', limit: maxHeaderSize },
      request_id: headers['x-request-id'],
    });
    const raw = unparsableRequestAnswer('HPE_HEADER_OVERFLOW') as string;
    expect(Number(headers['content-length'])).toBe(Buffer.byteLength(raw.split('\r\n\r\n')[1]));
  });

  it('answers any other parse error with 400 and the envelope', () => {
    for (const code of ['HPE_INVALID_METHOD', 'HPE_INVALID_HEADER_TOKEN', undefined]) {
      const { status, body } = parse(unparsableRequestAnswer(code) as string);
      expect(status).toBe('HTTP/1.1 400 Bad Request');
      expect(body?.error).toMatchObject({
        code: 'OP-TASK-REQUEST-INVALID',
        details: { reason: 'malformed_request' },
      });
    }
  });

  it("keeps Node's 408 for a head cut off by the headers timeout, and writes nothing on a reset", () => {
    expect(parse(unparsableRequestAnswer('ERR_HTTP_REQUEST_TIMEOUT') as string).status).toBe(
      'HTTP/1.1 408 Request Timeout',
    );
    expect(unparsableRequestAnswer('ECONNRESET')).toBeUndefined();
  });
});
