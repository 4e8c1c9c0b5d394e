import { Writable } from 'node:stream';
import { createLogger, keyFingerprint, redactText, redactUrl } from '../../src';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, stream };
}

describe('redaction', () => {
  it('removes user information from URLs', () => {
    expect(redactUrl('rtsp://user:pass@host/x')).toBe('rtsp://***@host/x');
    expect(redactUrl('rtsp://host:554/x')).toBe('rtsp://host:554/x');
    expect(redactText('failed to open rtsp://admin:hunter2@10.0.0.1:554/s1 (timeout)')).toBe(
      'failed to open rtsp://***@10.0.0.1:554/s1 (timeout)',
    );
    expect(redactText('http://h/x?api_key=abc&y=1&token=t')).toBe('http://h/x?api_key=***&y=1&token=***');
  });

  it('fingerprints keys without revealing them', () => {
    const fp = keyFingerprint('sk-very-secret');
    expect(fp).toMatch(/^[0-9a-f]{12}$/);
    expect(fp).not.toContain('secret');
    expect(keyFingerprint('sk-very-secret')).toBe(fp);
  });
});

describe('logger', () => {
  it('never writes an Authorization value, identity header, key or URL password', () => {
    const { lines, stream } = capture();
    const log = createLogger('test', { level: 'info', destination: stream });
    log.info(
      { headers: { authorization: 'Bearer sk-live-123', 'x-vision-identity': 'signed.value' } },
      'incoming',
    );
    log.info({ req: { headers: { authorization: 'Bearer sk-live-123' } } }, 'request');
    log.info(
      { Authorization: 'Bearer sk-live-123', apiKey: 'sk-live-123', nested: { password: 'pw-1' } },
      'fields',
    );
    log.info({ stream_url: 'rtsp://cam:pw-2@10.0.0.9/live' }, 'opening stream');
    log.warn('could not reach rtsp://cam:pw-3@10.0.0.9/live');
    log.error({ err: new Error('connect to rtsp://cam:pw-4@10.0.0.9/live failed') }, 'stream error');
    const out = lines.join('');
    expect(lines.length).toBe(6);
    for (const secret of ['sk-live-123', 'signed.value', 'pw-1', 'pw-2', 'pw-3', 'pw-4'])
      expect(out).not.toContain(secret);
    expect(out).toContain('rtsp://***@10.0.0.9/live');
    expect(out).toContain('"service":"test"');
  });
});
