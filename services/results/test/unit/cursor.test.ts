import { CursorCodec } from '../../src/domain/cursor';

const codec = new CursorCodec('a-cursor-secret-of-some-length');

describe('CursorCodec', () => {
  it('round-trips a position for its own task', () => {
    for (const lastSeq of [-1, 0, 1, 499, 2_000_000_000]) {
      const c = codec.encode({ taskId: 'task-1', lastSeq });
      expect(codec.decode(c, 'task-1')).toEqual({ ok: true, position: { taskId: 'task-1', lastSeq } });
    }
  });

  it('is opaque: the task id and seq are not readable as plain text', () => {
    const c = codec.encode({ taskId: 'task-1', lastSeq: 42 });
    expect(c).not.toContain('task-1');
    expect(c).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it("rejects another task's cursor", () => {
    const c = codec.encode({ taskId: 'task-1', lastSeq: 3 });
    expect(codec.decode(c, 'task-2')).toEqual({ ok: false });
  });

  it('rejects a forged payload re-signed with another key, and an edited payload', () => {
    const other = new CursorCodec('another-secret-entirely-123');
    expect(codec.decode(other.encode({ taskId: 'task-1', lastSeq: 3 }), 'task-1')).toEqual({ ok: false });

    const c = codec.encode({ taskId: 'task-1', lastSeq: 3 });
    const [, mac] = c.split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, t: 'task-1', s: 100 })).toString('base64url');
    expect(codec.decode(`${forged}.${mac}`, 'task-1')).toEqual({ ok: false });
  });

  it('rejects a changed signature, truncation and garbage', () => {
    const c = codec.encode({ taskId: 'task-1', lastSeq: 3 });
    const last = c[c.length - 1];
    const flipped = c.slice(0, -1) + (last === 'A' ? 'B' : 'A');
    for (const bad of [
      flipped,
      c.slice(0, -2),
      c.split('.')[0],
      `.${c}`,
      `${c}.x`,
      '',
      'abc',
      'a'.repeat(5000),
    ])
      expect(codec.decode(bad, 'task-1')).toEqual({ ok: false });
  });

  it('refuses a short secret and invalid positions', () => {
    expect(() => new CursorCodec('short')).toThrow();
    expect(() => codec.encode({ taskId: 't', lastSeq: -2 })).toThrow();
    expect(() => codec.encode({ taskId: 't', lastSeq: 1.5 })).toThrow();
  });
});
