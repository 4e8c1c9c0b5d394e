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
