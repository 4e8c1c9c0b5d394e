import { mkdtempSync, readdirSync, rmSync, utimesSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import {
  createObjectStore,
  InvalidObjectKeyError,
  ObjectNotFoundError,
  type DirectoryObjectStore,
} from '../src';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('DirectoryObjectStore', () => {
  let dataDir: string;
  let store: DirectoryObjectStore;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vision-objects-'));
    store = createObjectStore({
      VISION_MODE: 'standalone',
      VISION_DATA_DIR: dataDir,
      S3_BUCKET: 'vision',
      S3_REGION: 'us-east-1',
    }) as DirectoryObjectStore;
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('lives under VISION_DATA_DIR/objects and passes check', async () => {
    expect(store.kind).toBe('directory');
    expect(store.root).toBe(path.join(path.resolve(dataDir), 'objects'));
    await store.check();
  });

  it('puts buffers and streams, gets, stats, locates and deletes', async () => {
    expect(await store.put('videos/a.bin', Buffer.from('hello'))).toEqual({ size: 5 });
    expect(await store.put('videos/b.bin', Readable.from([Buffer.from('abc'), Buffer.from('def')]))).toEqual({
      size: 6,
    });
    expect((await readAll(await store.get('videos/a.bin'))).toString()).toBe('hello');
    expect((await readAll(await store.get('videos/b.bin'))).toString()).toBe('abcdef');
    const info = await store.stat('videos/b.bin');
    expect(info).toMatchObject({ key: 'videos/b.bin', size: 6 });
    expect(info?.lastModified).toBeInstanceOf(Date);
    const located = await store.locate('videos/a.bin');
    expect(path.isAbsolute(located)).toBe(true);
    expect(located).toBe(path.join(store.root, 'videos', 'a.bin'));

    await store.delete(['videos/a.bin', 'videos/missing.bin']);
    expect(await store.stat('videos/a.bin')).toBeUndefined();
    await expect(store.get('videos/a.bin')).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(store.locate('videos/a.bin')).rejects.toBeInstanceOf(ObjectNotFoundError);
    expect(await store.stat('videos')).toBeUndefined(); // a directory is not an object
  });

  it('reads a byte range (both ends inclusive)', async () => {
    await store.put('videos/r.bin', Buffer.from('0123456789'));
    expect((await readAll(await store.get('videos/r.bin', { start: 2, end: 5 }))).toString()).toBe('2345');
    expect((await readAll(await store.get('videos/r.bin', { start: 9, end: 9 }))).toString()).toBe('9');
    expect((await readAll(await store.get('videos/r.bin', { start: 0, end: 9 }))).toString()).toBe(
      '0123456789',
    );
    await expect(store.get('videos/none.bin', { start: 0, end: 1 })).rejects.toBeInstanceOf(
      ObjectNotFoundError,
    );
  });

  it('replaces an object atomically on a second put', async () => {
    await store.put('k', Buffer.from('one'));
    await store.put('k', Buffer.from('two!'));
    expect((await readAll(await store.get('k'))).toString()).toBe('two!');
  });

  it('leaves nothing behind when the stream fails, and keeps the previous version', async () => {
    await store.put('up/x.mp4', Buffer.from('old'));
    const failing = new Readable({
      read() {
        this.push(Buffer.from('partial data'));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(store.put('up/x.mp4', failing)).rejects.toThrow('client went away');
    await expect(store.put('up/y.mp4', Readable.from([Buffer.from('abc')]), { size: 10 })).rejects.toThrow(
      'expected 10 bytes',
    );
    expect(allFiles(store.root).sort()).toEqual([path.join('up', 'x.mp4')]);
    expect((await readAll(await store.get('up/x.mp4'))).toString()).toBe('old');
    expect(await store.stat('up/y.mp4')).toBeUndefined();
  });

  it('leaves no partial file when the body fails before the file is even open', async () => {
    // The upload is refused while the temporary file is still being opened (a tiny non-video upload
    // is refused on its first bytes): the cleanup must wait for the file to exist and close.
    for (let i = 0; i < 300; i++) {
      const body = new PassThrough();
      body.on('error', () => undefined); // as the upload handler does: the store reports the failure
      const put = store.put(`race/${i}.mp4`, body);
      body.write('first bytes');
      await new Promise((r) => setImmediate(r));
      body.destroy(new Error('refused'));
      await expect(put).rejects.toThrow('refused');
    }
    await new Promise((r) => setTimeout(r, 100)); // anything still closing has closed
    expect(allFiles(store.root)).toEqual([]);
  });

  it.each([
    '../escape',
    'a/../../escape',
    '/etc/passwd',
    'a//b',
    './a',
    'a/./b',
    'a\\b',
    '',
    'a/',
    '.hidden',
    'a/.partial',
  ])('refuses the key %j', async (key) => {
    await expect(store.put(key, Buffer.from('x'))).rejects.toBeInstanceOf(InvalidObjectKeyError);
    await expect(store.get(key)).rejects.toBeInstanceOf(InvalidObjectKeyError);
    await expect(store.stat(key)).rejects.toBeInstanceOf(InvalidObjectKeyError);
    await expect(store.delete([key])).rejects.toBeInstanceOf(InvalidObjectKeyError);
    await expect(store.locate(key)).rejects.toBeInstanceOf(InvalidObjectKeyError);
  });

  it('never writes outside its root', async () => {
    await expect(store.put('../outside.txt', Buffer.from('x'))).rejects.toThrow();
    expect(existsSync(path.join(dataDir, 'outside.txt'))).toBe(false);
  });

  it('lists objects under a prefix older than a date, up to a limit', async () => {
    const old = new Date('2025-01-01T00:00:00Z');
    for (const k of ['t/1/a', 't/1/b', 't/2/a', 't/10/a', 'u/1/a']) {
      await store.put(k, Buffer.from(k));
      utimesSync(path.join(store.root, k), old, old);
    }
    await store.put('t/1/new', Buffer.from('new'));
    const cutoff = new Date('2025-06-01T00:00:00Z');
    expect((await store.listOlderThan('t/1/', cutoff, 10)).map((o) => o.key)).toEqual(['t/1/a', 't/1/b']);
    expect((await store.listOlderThan('t/1', cutoff, 10)).map((o) => o.key).sort()).toEqual([
      't/1/a',
      't/1/b',
      't/10/a',
    ]);
    expect((await store.listOlderThan('', cutoff, 100)).map((o) => o.key).sort()).toEqual([
      't/1/a',
      't/1/b',
      't/10/a',
      't/2/a',
      'u/1/a',
    ]);
    expect(await store.listOlderThan('t/', cutoff, 2)).toHaveLength(2);
    const [first] = await store.listOlderThan('u/', cutoff, 1);
    expect(first).toMatchObject({ key: 'u/1/a', size: 5 });
    expect(first.lastModified.getTime()).toBe(old.getTime());
    expect(await store.listOlderThan('nothing/', cutoff, 10)).toEqual([]);
    await expect(store.listOlderThan('../', cutoff, 10)).rejects.toBeInstanceOf(InvalidObjectKeyError);
  });
});
