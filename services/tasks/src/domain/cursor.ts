/** Opaque cursors for task history (newest first). Pure. */
export interface ListPosition {
  createdAt: string;
  taskId: string;
}

export function encodeCursor(p: ListPosition): string {
  return Buffer.from(JSON.stringify([p.createdAt, p.taskId])).toString('base64url');
}

export function decodeCursor(cursor: string): ListPosition | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 2) return undefined;
    const [createdAt, taskId] = v as unknown[];
    if (typeof createdAt !== 'string' || typeof taskId !== 'string') return undefined;
    if (Number.isNaN(Date.parse(createdAt)) || taskId.length > 64) return undefined;
    return { createdAt, taskId };
  } catch {
    return undefined;
  }
}
