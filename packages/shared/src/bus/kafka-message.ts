/** Decoding of a Kafka record into the bus's IncomingMessage fields, the same for every Kafka client. */

/** A record's value: its JSON, or its text when it is not JSON (handlers validate what they receive). */
export function decodeValue(raw: Buffer | null | undefined): unknown {
  if (raw === null || raw === undefined) return null;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A record's headers as text; of a header given several times, the last value. */
export function decodeHeaders(
  headers: Record<string, unknown> | Iterable<[unknown, unknown]> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  const entries =
    headers === undefined ? [] : Symbol.iterator in headers ? [...headers] : Object.entries(headers);
  for (const [k, v] of entries) {
    const key = Buffer.isBuffer(k) ? k.toString('utf8') : String(k);
    if (Buffer.isBuffer(v)) out[key] = v.toString('utf8');
    else if (typeof v === 'string') out[key] = v;
    else if (Array.isArray(v) && v.length > 0) out[key] = String(v[v.length - 1]);
  }
  return out;
}
