import { createHmac, timingSafeEqual } from 'node:crypto';

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

  /** `purpose` names what the positions count (`frames`: frame seqs; `events`: analytics event numbers). */
  constructor(secret: string, purpose: 'frames' | 'events' = 'frames') {
    if (secret.length < 16) throw new Error('cursor secret must have at least 16 characters');
    // A key of its own, derived from the configured secret, so a cursor is never valid as anything else
    // (a frames cursor is no events cursor).
    const label = purpose === 'frames' ? 'vision.results.cursor.v1' : 'vision.results.events-cursor.v1';
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

  /** Checks the signature and that the cursor belongs to `taskId`. Never throws. */
  decode(cursor: string, taskId: string): CursorCheck {
    if (cursor.length > MAX_CURSOR_LENGTH) return { ok: false };
    const dot = cursor.indexOf('.');
    if (dot <= 0 || dot !== cursor.lastIndexOf('.')) return { ok: false };
    const payload = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false };
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
