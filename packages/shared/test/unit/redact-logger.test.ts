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
    // An unencoded `@` in a password: everything up to the last `@` before the path is user information.
    expect(redactUrl('rtsp://admin:p@ss@10.0.0.1/s1')).toBe('rtsp://***@10.0.0.1/s1');
  });

  it('removes the secret parameters of presigned and signed URLs, and only those', () => {
    const presigned =
      'https://b.s3.amazonaws.com/v.m3u8?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
      '&X-Amz-Credential=AKIAEXAMPLE%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20250101T000000Z' +
      '&X-Amz-Expires=900&X-Amz-Security-Token=IQoJtoken&X-Amz-Signature=abcdef0123&x-id=GetObject';
    expect(redactText(presigned)).toBe(
      'https://b.s3.amazonaws.com/v.m3u8?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***' +
        '&X-Amz-Date=20250101T000000Z&X-Amz-Expires=900&X-Amz-Security-Token=***&X-Amz-Signature=***&x-id=GetObject',
    );
    expect(redactText('https://a.blob.core.windows.net/c/v.mp4?sv=2022&se=2025&sp=r&sig=AZSIG')).toBe(
      'https://a.blob.core.windows.net/c/v.mp4?sv=2022&se=2025&sp=r&sig=***',
    );
    expect(redactText('https://g/v.mp4?X-Goog-Credential=GOOG1&X-Goog-Signature=GSIG&StreamKey=K')).toBe(
      'https://g/v.mp4?X-Goog-Credential=***&X-Goog-Signature=***&StreamKey=***',
    );
    expect(redactText('https://h/cb#access_token=TOK&state=1 then more')).toBe(
      'https://h/cb#access_token=***&state=1 then more',
    );
    expect(redactText('http://h/x?width=640&fps=25')).toBe('http://h/x?width=640&fps=25');
  });

  it('removes the play path of RTMP URLs, where stream keys live, and keeps the application name', () => {
    expect(redactText('rtmp://live.example.com/live/sk_abc123')).toBe('rtmp://live.example.com/live/***');
    expect(redactText('rtmps://h:443/app/inst/sk_abc123?token=t')).toBe('rtmps://h:443/app/***');
    expect(redactText('ffmpeg: rtmp://u:pw@h/live/sk_abc123: I/O error')).toBe(
      'ffmpeg: rtmp://***@h/live/*** I/O error',
    );
    expect(redactText('{"url":"rtmp://h/live/sk_abc123"}')).toBe('{"url":"rtmp://h/live/***"}');
    // The application name alone is no key; its query parameters follow the query rule.
    expect(redactText('rtmp://h/live')).toBe('rtmp://h/live');
    expect(redactText('rtmp://h/live?key=sk_abc123')).toBe('rtmp://h/live?key=***');
    // Other schemes keep their paths.
    expect(redactText('rtsp://h/live/cam1')).toBe('rtsp://h/live/cam1');
  });

  it('removes password parameters of stream URLs, short names and `;` parameters included', () => {
    expect(redactText('rtsp://cam/stream?user=a&pw=secret')).toBe('rtsp://cam/stream?user=a&pw=***');
    expect(redactText('rtsp://cam/stream?user=a&p=secret')).toBe('rtsp://cam/stream?user=a&p=***');
    expect(redactText('rtsp://cam/stream?PW=secret&P=secret2')).toBe('rtsp://cam/stream?PW=***&P=***');
    expect(redactText('rtsp://cam/x;password=secret')).toBe('rtsp://cam/x;password=***');
    expect(redactText('rtsp://cam/x;user=a;pw=secret;channel=1')).toBe(
      'rtsp://cam/x;user=a;pw=***;channel=1',
    );
    expect(redactText('http://cam/s?passwd=s1&pwd=s2&pass=s3&password=s4&pswd=s5&p=s6&pw=s7&user=a')).toBe(
      'http://cam/s?passwd=***&pwd=***&pass=***&password=***&pswd=***&p=***&pw=***&user=a',
    );
    expect(redactText('opening "rtsp://cam/s?p=secret" failed: timeout')).toBe(
      'opening "rtsp://cam/s?p=***" failed: timeout',
    );
    // Short names are secret only in a URL: free text and other parameters keep their values.
    expect(redactText('a p=0.5 fit, pw=3 and x;p=1 ?p=2')).toBe('a p=0.5 fit, pw=3 and x;p=1 ?p=2');
    expect(redactText('http://h/x?page=2&pa=1&ps=3&app=4')).toBe('http://h/x?page=2&pa=1&ps=3&app=4');
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
    log.info({ stream_url: 'rtsp://10.0.0.9/live?user=a&pw=pw-5&p=pw-6' }, 'opening stream');
    log.warn('could not reach rtsp://10.0.0.9/live;password=pw-7');
    const out = lines.join('');
    expect(lines.length).toBe(8);
    for (const secret of [
      'sk-live-123',
      'signed.value',
      'pw-1',
      'pw-2',
      'pw-3',
      'pw-4',
      'pw-5',
      'pw-6',
      'pw-7',
    ])
      expect(out).not.toContain(secret);
    expect(out).toContain('rtsp://***@10.0.0.9/live');
    expect(out).toContain('"service":"test"');
  });
});
