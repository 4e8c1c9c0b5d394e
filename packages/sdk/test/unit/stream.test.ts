import { followFrames, parseEventStream } from '../../src/stream';

const frame = (i: number) => ({
  frame_id: `f${i}`,
  frame_time_ms: i,
  image: { width: 1, height: 1 },
  objects: [],
});
const event = (i: number) => `event: frame\nid: c${i}\ndata: ${JSON.stringify(frame(i))}\n\n`;

/** A stream body that sends `chunks` and then closes (a dropped connection when no `end` is among them). */
function sse(chunks: string[]): Response {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(enc.encode(x));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

describe('parseEventStream', () => {
  it('joins split chunks, skips heartbeats and reads CRLF framing', async () => {
    const text = `: heartbeat\r\n\r\n${event(0)}`;
    const out = [];
    for await (const ev of parseEventStream(sse([text.slice(0, 7), text.slice(7, 30), text.slice(30)]).body!))
      out.push(ev);
    expect(out).toEqual([{ event: 'frame', id: 'c0', data: JSON.stringify(frame(0)) }]);
  });
});

describe('parseEventStream with CRLF cut between chunks', () => {
  it('reads a CR at the end of one chunk and its LF at the start of the next as one line end', async () => {
    const text = 'event: frame\r\nid: c1\r\ndata: {}\r\n\r\nevent: end\r\ndata: {}\r\n\r\n';
    const cuts = [...text.matchAll(/\r/g)].map((m) => m.index! + 1);
    const chunks = [...cuts, text.length].map((c, i) => text.slice(i === 0 ? 0 : cuts[i - 1], c));
    const out = [];
    for await (const ev of parseEventStream(sse(chunks).body!)) out.push(ev);
    expect(out).toEqual([
      { event: 'frame', id: 'c1', data: '{}' },
      { event: 'end', data: '{}' },
    ]);
  });
});

describe('parseEventStream at the end of the body', () => {
  it('takes a CR that is the last byte of the body as the line end that completes the event', async () => {
    const out = [];
    for await (const ev of parseEventStream(sse(['event: end\rdata: {}\r', '\r']).body!)) out.push(ev);
    expect(out).toEqual([{ event: 'end', data: '{}' }]);
  });
});

describe('followFrames', () => {
  it('reopens a dropped stream with the last event id and yields every frame once, until `end`', async () => {
    const asked: (string | undefined)[] = [];
    const replies = [
      () => sse([event(0), event(1), 'event: fr']), // dropped mid-event
      () => Promise.reject(new TypeError('fetch failed')),
      () => new Response('{}', { status: 503 }),
      () => sse([event(2), ': heartbeat\n\n', event(3), 'event: end\ndata: {}\n\n']),
    ];
    const open = async (id: string | undefined) => {
      asked.push(id);
      return replies[asked.length - 1]();
    };
    const fail = async (res: Response) => new Error(`status ${res.status}`);
    const ids = [];
    for await (const f of followFrames(open, fail, { reconnectDelayMs: 1 })) ids.push(f.frame_id);
    expect(ids).toEqual(['f0', 'f1', 'f2', 'f3']);
    expect(asked).toEqual([undefined, 'c1', 'c1', 'c1']);
  });

  it('throws the answer of a refusal (404) instead of retrying', async () => {
    const open = async () => new Response('{}', { status: 404 });
    const it = followFrames(open, async (res) => new Error(`status ${res.status}`), { reconnectDelayMs: 1 });
    await expect(it.next()).rejects.toThrow('status 404');
  });
});
