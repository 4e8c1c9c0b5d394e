import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Opaque paging cursors. A cursor names the task it belongs to and the last frame sequence number the
 * client has already received; it is signed with HMAC-SHA256 so that a client can neither forge one nor
 * reuse one task's cursor on another task.
 *
 * Wire form: base64url(JSON {v:1, t:<task_id>, s:<last seq>}) + "." + base64url(HMAC(key, payload)).
 */
export interface CursorPosition {
  taskId: string;
  /** Sequence number of the last frame already returned; -1 means "before the first frame". */
  lastSeq: number;
}

export type CursorCheck = { ok: true; position: CursorPosition } | { ok: false };

const MAX_CURSOR_LENGTH = 1024;

export class CursorCodec {
  private readonly key: Buffer;

  /**
   * `purpose` names what the cursors hold (`frames`: frame seqs; `events`: analytics event numbers; `replay`:
   * the sealed state of a replay, sealState).
   */
  constructor(secret: string, purpose: 'frames' | 'events' | 'replay' = 'frames') {
    if (secret.length < 16) throw new Error('cursor secret must have at least 16 characters');
    // A key of its own, derived from the configured secret, so a cursor is never valid as anything else
    // (a frames cursor is no events cursor).
    const label = {
      frames: 'vision.results.cursor.v1',
      events: 'vision.results.events-cursor.v1',
      replay: 'vision.results.replay-cursor.v1',
    }[purpose];
    this.key = createHmac('sha256', secret).update(label).digest();
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  encode(position: CursorPosition): string {
    if (!Number.isSafeInteger(position.lastSeq) || position.lastSeq < -1)
      throw new Error('invalid cursor position');
    const payload = Buffer.from(JSON.stringify({ v: 1, t: position.taskId, s: position.lastSeq })).toString(
      'base64url',
    );
    return `${payload}.${this.mac(payload)}`;
  }

  /** The payload of a cursor whose signature holds; undefined otherwise. */
  private signed(cursor: string, maxLength: number): string | undefined {
    if (cursor.length > maxLength) return undefined;
    const dot = cursor.indexOf('.');
    if (dot <= 0 || dot !== cursor.lastIndexOf('.')) return undefined;
    const payload = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return payload;
  }

  /** A cursor holding `state` (JSON) for `taskId`, deflated and signed: the client carries it, unchanged. */
  sealState(taskId: string, state: unknown): string {
    const payload = deflateRawSync(JSON.stringify({ v: 1, t: taskId, x: state })).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The state sealed in a cursor of `taskId` (at most `maxLength` long); undefined for anything else. */
  openState(cursor: string, taskId: string, maxLength: number): unknown {
    const payload = this.signed(cursor, maxLength);
    if (payload === undefined) return undefined;
    try {
      const raw = inflateRawSync(Buffer.from(payload, 'base64url'), { maxOutputLength: 64 * maxLength });
      const claims = JSON.parse(raw.toString('utf8')) as { v?: unknown; t?: unknown; x?: unknown } | null;
      return claims?.v === 1 && claims.t === taskId ? claims.x : undefined;
    } catch {
      return undefined;
    }
  }

  /** Checks the signature and that the cursor belongs to `taskId`. Never throws. */
  decode(cursor: string, taskId: string): CursorCheck {
    const payload = this.signed(cursor, MAX_CURSOR_LENGTH);
    if (payload === undefined) return { ok: false };
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return { ok: false };
    }
    if (typeof claims !== 'object' || claims === null) return { ok: false };
    const { v, t, s } = claims as { v?: unknown; t?: unknown; s?: unknown };
    if (v !== 1 || typeof t !== 'string' || typeof s !== 'number') return { ok: false };
    if (!Number.isSafeInteger(s) || s < -1) return { ok: false };
    if (t !== taskId) return { ok: false };
    return { ok: true, position: { taskId: t, lastSeq: s } };
  }
}

/**
 * The frames of a read that may be served, and whether stored frames wait after them. A frame of a task with zones
 * or lines (`asOfSeq` given: the seq of the last frame its evaluation has seen) is served once it is evaluated, so
 * a page and its cursor stop at the last evaluated frame; a task without rules (`asOfSeq` undefined) serves every
 * stored frame. `rows` are in seq order.
 */
export function evaluatedOnly<T extends { seq: number }>(
  rows: T[],
  asOfSeq: number | undefined,
): { rows: T[]; waiting: boolean } {
  if (asOfSeq === undefined) return { rows, waiting: false };
  let n = rows.length;
  while (n > 0 && rows[n - 1].seq > asOfSeq) n--;
  return n === rows.length ? { rows, waiting: false } : { rows: rows.slice(0, n), waiting: true };
}
