import { parseEventStream } from '../../packages/sdk/src/stream';

/** When the heartbeats of a Server-Sent Events answer arrive: the times of the first `count` chunks holding one. */
export async function heartbeatTimes(answer: Response, count: number, withinMs: number): Promise<number[]> {
  const reader = answer.body!.getReader();
  const beats: number[] = [];
  const opened = Date.now();
  while (beats.length < count && Date.now() - opened < withinMs) {
    const chunk = await reader.read();
    if (chunk.done) break;
    if (Buffer.from(chunk.value).toString().includes(': heartbeat')) beats.push(Date.now());
  }
  await reader.cancel();
  return beats;
}

/**
 * Reads a Server-Sent Events answer to its close: when each event named `name` arrived (ms since the epoch), and
 * whether the stream's `end` event came.
 */
export async function eventArrivals(answer: Response, name: string): Promise<{ at: number[]; end: boolean }> {
  const at: number[] = [];
  let end = false;
  for await (const ev of parseEventStream(answer.body!)) {
    if (ev.event === name) at.push(Date.now());
    if (ev.event === 'end') end = true;
  }
  return { at, end };
}
