/**
 * The load report a backend's admission queue attaches to each answer of the calls it admits or refuses
 * (pure). The gateway reads it to decide the next calls at the door, before anything is forwarded, and
 * never passes it on to the client (docs/OVERLOAD.md "Admission at the door").
 *
 * `x-vision-load: replica=3f9a1c20; limit=4; max_wait_ms=1000; running=2; waiting=0`
 */

/** The internal response header that carries a backend replica's load report. */
export const LOAD_HEADER = 'x-vision-load';

export interface LoadReport {
  /** The reporting queue's own id (a replica of the service). */
  replica: string;
  /** Calls it runs at once now. */
  limit: number;
  /** The longest a call may wait for its turn there (ms). */
  maxWaitMs: number;
  /** Calls running and waiting there when the report was made. */
  running: number;
  waiting: number;
}

const MAX_COUNT = 1_000_000;

export function formatLoadReport(r: LoadReport): string {
  return `replica=${r.replica}; limit=${r.limit}; max_wait_ms=${r.maxWaitMs}; running=${r.running}; waiting=${r.waiting}`;
}

/** Reads a load report; undefined for anything that is not one (a missing, repeated or malformed header). */
export function parseLoadReport(value: string | string[] | undefined): LoadReport | undefined {
  if (typeof value !== 'string' || value.length > 200) return undefined;
  const fields = new Map<string, string>();
  for (const part of value.split(';')) {
    const m = /^\s*([a-z_]+)=([A-Za-z0-9_-]{1,40})\s*$/.exec(part);
    if (!m) return undefined;
    fields.set(m[1] as string, m[2] as string);
  }
  const count = (name: string, min: number): number | undefined => {
    const v = fields.get(name);
    const n = v !== undefined && /^\d{1,7}$/.test(v) ? Number(v) : NaN;
    return n >= min && n <= MAX_COUNT ? n : undefined;
  };
  const replica = fields.get('replica');
  const limit = count('limit', 1);
  const maxWaitMs = count('max_wait_ms', 0);
  const running = count('running', 0);
  const waiting = count('waiting', 0);
  if (replica === undefined || limit === undefined || maxWaitMs === undefined) return undefined;
  if (running === undefined || waiting === undefined) return undefined;
  return { replica, limit, maxWaitMs, running, waiting };
}
