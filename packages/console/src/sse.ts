/**
 * Server-Sent Events framing (WHATWG HTML, "Server-sent events") read from a fetch body: EventSource
 * cannot send the key in a header. The SDK's `parseEventStream` (packages/sdk/src/stream.ts) does the
 * same, but the console cannot import it: it ships unbundled ES modules and the SDK is CommonJS.
 * packages/console/test/unit/sse.test.ts holds the two to the same answers.
 */

/** One event; comments (heartbeats) and events without data are skipped. */
export interface ServerEvent {
  event: string;
  data: string;
  id?: string;
}

/** One event block (the lines between blank lines), or undefined when it carries no data. */
function eventOf(block: string): ServerEvent | undefined {
  const ev: ServerEvent = { event: 'message', data: '' };
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') ev.event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) ev.id = value;
  }
  if (data.length === 0) return undefined;
  ev.data = data.join('\n');
  return ev;
}

/** Splits a text/event-stream body into events as they arrive; cancels the body when left early. */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buf = '';
  /** A chunk's last CR: the first half of a CRLF cut in two, or a line end of its own. */
  let cr = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // A CR held back from the last chunk ends its line: the body ended right after it.
      if (done && !cr) return;
      let text = cr + (done ? '' : decoder.decode(value, { stream: true }));
      cr = !done && text.endsWith('\r') ? '\r' : '';
      if (cr) text = text.slice(0, -1);
      buf += text.replace(/\r\n?/g, '\n');
      let at: number;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const ev = eventOf(buf.slice(0, at));
        buf = buf.slice(at + 2);
        if (ev) yield ev;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
