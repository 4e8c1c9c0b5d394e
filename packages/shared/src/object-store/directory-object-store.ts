import { createReadStream, createWriteStream } from 'node:fs';
import { access, constants, mkdir, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange, ObjectInfo, ObjectStore } from './port';

/** Raised by get/locate when the object does not exist (both adapters). */
export class ObjectNotFoundError extends Error {
  readonly code = 'NotFound';
  constructor(readonly key: string) {
    super(`object not found: ${key}`);
    this.name = 'ObjectNotFoundError';
  }
}

/** Raised for a key the stores refuse (both adapters). */
export class InvalidObjectKeyError extends Error {
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`invalid object key ${JSON.stringify(key.slice(0, 200))}: ${reason}`);
    this.name = 'InvalidObjectKeyError';
  }
}

/**
 * Object keys are relative slash-separated paths: 1-1024 characters, no leading or trailing slash,
 * no empty, `.` or `..` segment, no segment starting with `.` (reserved for in-progress writes), no
 * backslash or control characters.
 */
export function validateObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidObjectKeyError(String(key), 'empty');
  if (key.length > 1024) throw new InvalidObjectKeyError(key, 'longer than 1024 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(key))
    throw new InvalidObjectKeyError(key, 'backslash or control character');
  if (key.startsWith('/') || path.isAbsolute(key)) throw new InvalidObjectKeyError(key, 'absolute path');
  for (const seg of key.split('/')) {
    if (seg === '' || seg === '.' || seg === '..')
      throw new InvalidObjectKeyError(key, 'empty, "." or ".." segment');
    if (seg.startsWith('.')) throw new InvalidObjectKeyError(key, 'segment starts with "."');
  }
}

function validatePrefix(prefix: string): void {
  if (prefix === '') return;
  // A prefix may end in '/' or in a partial segment; the rest must be a valid key.
  validateObjectKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

const isMissing = (err: unknown) => {
  const code = (err as { code?: unknown })?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * Standalone object store: one file per object under `root` (`${VISION_DATA_DIR}/objects`). A put
 * writes a hidden temporary file in the target directory and renames it into place, so readers never
 * see a partial object and a failed write leaves nothing behind.
 */
export class DirectoryObjectStore implements ObjectStore {
  readonly kind = 'directory' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private pathOf(key: string): string {
    validateObjectKey(key);
    const p = path.resolve(this.root, key);
    if (!p.startsWith(this.root + path.sep)) throw new InvalidObjectKeyError(key, 'outside the store');
    return p;
  }

  async put(
    key: string,
    body: Readable | Buffer,
    opts: { contentType?: string; size?: number } = {},
  ): Promise<{ size: number }> {
    const file = this.pathOf(key);
    const dir = path.dirname(file);
    await mkdir(dir, { recursive: true });
    const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.partial`);
    let size = 0;
    try {
      if (Buffer.isBuffer(body)) {
        size = body.length;
        await writeFile(tmp, body, { flag: 'wx' });
      } else {
        const count = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            size += chunk.length;
            cb(null, chunk);
          },
        });
        const out = createWriteStream(tmp, { flags: 'wx' });
        // Errors are reported by pipeline; a stream destroyed after it settled must not crash the process.
        out.on('error', () => undefined);
        count.on('error', () => undefined);
        try {
          await pipeline(body, count, out);
        } catch (err) {
          // pipeline can reject while the file is still being opened; it is created (and closed)
          // after that. Wait for it, or the unlink below runs first and the partial file stays.
          if (!out.closed) await new Promise<void>((r) => out.once('close', () => r()));
          throw err;
        }
      }
      if (opts.size !== undefined && opts.size !== size)
        throw new Error(`object ${key}: expected ${opts.size} bytes, received ${size}`);
      await rename(tmp, file);
      return { size };
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(key);
    const info = await stat(file).catch((err: unknown) => {
      if (isMissing(err)) return undefined;
      throw err;
    });
    if (!info?.isFile()) throw new ObjectNotFoundError(key);
    return createReadStream(file, range ? { start: range.start, end: range.end } : undefined);
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    const file = this.pathOf(key);
    try {
      const info = await stat(file);
      return info.isFile() ? { key, size: info.size, lastModified: new Date(info.mtimeMs) } : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async delete(keys: string[]): Promise<void> {
    const files = keys.map((k) => this.pathOf(k));
    for (const f of files) await rm(f, { force: true });
  }

  async listOlderThan(prefix: string, before: Date, limit: number): Promise<ObjectInfo[]> {
    validatePrefix(prefix);
    const out: ObjectInfo[] = [];
    if (limit <= 0) return out;
    // Start at the deepest directory the prefix names.
    const slash = prefix.lastIndexOf('/');
    const startRel = slash >= 0 ? prefix.slice(0, slash) : '';
    const walk = async (rel: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(path.join(this.root, rel), { withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) return;
        throw err;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        if (out.length >= limit) return;
        if (e.name.startsWith('.')) continue; // in-progress writes
        const key = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          // Descend only where keys can still match the prefix.
          if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(key);
        } else if (e.isFile() && key.startsWith(prefix)) {
          const info = await stat(path.join(this.root, key)).catch(() => undefined);
          if (info && info.mtimeMs < before.getTime())
            out.push({ key, size: info.size, lastModified: new Date(info.mtimeMs) });
        }
      }
    };
    await walk(startRel);
    return out;
  }

  async locate(key: string): Promise<string> {
    const file = this.pathOf(key);
    if (!(await this.stat(key))) throw new ObjectNotFoundError(key);
    return file;
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.R_OK | constants.W_OK);
  }
}
