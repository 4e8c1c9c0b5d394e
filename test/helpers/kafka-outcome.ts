/**
 * 'ok' when the Kafka call succeeds, else the broker's error code as kafkajs names it (`type`, on the error or a
 * cause; a topic whose metadata is refused comes as a plain error naming it), else the error's class name.
 */
export async function kafkaOutcome(q: Promise<unknown>): Promise<string> {
  try {
    await q;
    return 'ok';
  } catch (err) {
    for (let e = err as { type?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
      if (e.type) return e.type;
    if (/Not authorized to access topics/.test((err as Error).message)) return 'TOPIC_AUTHORIZATION_FAILED';
    return (err as Error).name ?? String(err);
  }
}
