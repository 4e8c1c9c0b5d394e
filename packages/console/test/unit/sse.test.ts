import { parseEventStream as sdkParse } from '../../../sdk/src/stream';
import { parseEventStream, type ServerEvent } from '../../src/sse';

/** A body that delivers `text` in the given chunk sizes (cycled), to cut events, lines and characters. */
function body(text: string, sizes: readonly number[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const chunks: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length];
    chunks.push(bytes.slice(at, at + n));
    at += n;
  }
  return new ReadableStream({
    pull(c) {
      const next = chunks.shift();
      if (next) c.enqueue(next);
      else c.close();
    },
  });
}

async function all(events: AsyncGenerator<ServerEvent>): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for await (const ev of events) out.push(ev);
  return out;
}

const STREAM = [
  ': heartbeat\n\n',
  'event: frame\nid: c-1\ndata: {"frame_id":"f-1","label":"person é"}\n\n',
  'event: frame\r\nid: c-2\r\ndata: {"frame_id":"f-2"}\r\n\r\n',
  'data: first line\ndata: second line\n\n',
  'event: frame\nid: bad\0id\ndata:no space\n\n',
  'retry: 1000\n\n',
  'event: frame\nid\ndata\n\n',
  'event: end\ndata: {}\n\n',
  'event: frame\ndata: {"frame_id":"cut-off"}',
].join('');

describe('console event-stream parser', () => {
  it('reads events, ids and multi-line data; skips comments, data-less blocks and an unended event', async () => {
    expect(await all(parseEventStream(body(STREAM, [STREAM.length])))).toEqual([
      { event: 'frame', id: 'c-1', data: '{"frame_id":"f-1","label":"person é"}' },
      { event: 'frame', id: 'c-2', data: '{"frame_id":"f-2"}' },
      { event: 'message', data: 'first line\nsecond line' },
      { event: 'frame', data: 'no space' },
      { event: 'frame', id: '', data: '' },
      { event: 'end', data: '{}' },
    ]);
  });

  it.each([[[1]], [[2, 3]], [[7, 1, 13]], [[64]]])(
    'gives the same events however the body is cut, a CRLF included (%j)',
    async (sizes) => {
      const whole = await all(parseEventStream(body(STREAM, [STREAM.length])));
      expect(await all(parseEventStream(body(STREAM, sizes)))).toEqual(whole);
    },
  );

  it('gives the same events as the SDK parser on what the service sends', async () => {
    const lf = STREAM.replace(/\r\n/g, '\n');
    for (const sizes of [[lf.length], [1], [5, 2]])
      expect(await all(parseEventStream(body(lf, sizes)))).toEqual(await all(sdkParse(body(lf, sizes))));
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('event: frame\ndata: 1\n\nevent: frame\ndata: 2\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const ev of parseEventStream(stream)) {
      expect(ev.data).toBe('1');
      break;
    }
    expect(cancelled).toBe(true);
  });
});
