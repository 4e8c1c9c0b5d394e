/**
 * The object-store adapter against the S3 server of the distributed stack (scripts/stack: SeaweedFS), the S3
 * features it relies on one by one (docs/OBJECT-STORE.md): path-style addressing with SigV4, single PUT and
 * multipart upload, ranged GET, HEAD, multi-object delete, listing by prefix, presigned GET, abort of a failed
 * multipart upload, and bucket lifecycle rules.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { MinioObjectStore, ObjectNotFoundError, PART_SIZE, setBucketLifecycle } from '@vision/shared';
import { readStackEnv } from '../../scripts/distributed/launcher';
import { describeDistributed } from './support';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describeDistributed('object store on the stack S3 server', () => {
  const stack = readStackEnv();
  const bucket = `vision-contract-${randomUUID().slice(0, 8)}`;
  const store = new MinioObjectStore({
    endpoint: stack.s3Endpoint,
    accessKey: stack.s3AccessKey,
    secretKey: stack.s3SecretKey,
    bucket,
    region: 'us-east-1',
    presignSeconds: 60,
  });

  beforeAll(() => store.check());
  afterAll(async () => {
    const names: string[] = [];
    for await (const o of store.client.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length) await store.client.removeObjects(bucket, names);
    await store.client.removeBucket(bucket);
  });

  it('creates its bucket on first use and refuses a wrong secret', async () => {
    await store.check();
    expect(await store.client.bucketExists(bucket)).toBe(true);
    const wrong = new MinioObjectStore({
      endpoint: stack.s3Endpoint,
      accessKey: stack.s3AccessKey,
      secretKey: `${stack.s3SecretKey}-wrong`,
      bucket,
      region: 'us-east-1',
    });
    await expect(wrong.put('x/denied.bin', Buffer.from('no'))).rejects.toThrow();
    expect(await store.stat('x/denied.bin')).toBeUndefined();
  });

  it('puts buffers and streams, gets, stats, locates (presigned GET) and deletes', async () => {
    expect(await store.put('videos/a.bin', Buffer.from('hello'), { contentType: 'video/mp4' })).toEqual({
      size: 5,
    });
    expect(await store.put('videos/b.bin', Readable.from([Buffer.from('abc'), Buffer.from('def')]))).toEqual({
      size: 6,
    });
    expect((await readAll(await store.get('videos/a.bin'))).toString()).toBe('hello');
    expect((await readAll(await store.get('videos/b.bin'))).toString()).toBe('abcdef');
    expect(await store.stat('videos/b.bin')).toMatchObject({ key: 'videos/b.bin', size: 6 });
    const url = await store.locate('videos/a.bin');
    expect(url).toContain('X-Amz-Signature=');
    const r = await fetch(url, { headers: { range: 'bytes=1-3' } });
    expect(r.status).toBe(206);
    expect(await r.text()).toBe('ell');

    await store.delete(['videos/a.bin', 'videos/missing.bin']);
    expect(await store.stat('videos/a.bin')).toBeUndefined();
    await expect(store.get('videos/a.bin')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });

  it('uploads a stream of unknown size in several parts and reads byte ranges of it', async () => {
    const body = randomBytes(2 * PART_SIZE + 12345);
    const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) =>
      body.subarray(i * 65536, (i + 1) * 65536),
    );
    expect(await store.put('videos/big.bin', Readable.from(chunks))).toEqual({ size: body.length });
    expect(await store.stat('videos/big.bin')).toMatchObject({ size: body.length });
    for (const [start, end] of [
      [0, 0],
      [PART_SIZE - 10, PART_SIZE + 10],
      [body.length - 100, body.length - 1],
    ]) {
      const got = await readAll(await store.get('videos/big.bin', { start, end }));
      expect(got.equals(body.subarray(start, end + 1))).toBe(true);
    }
    expect((await readAll(await store.get('videos/big.bin'))).equals(body)).toBe(true);
  });

  it('leaves no object and no pending multipart upload when the stream fails', async () => {
    let sent = 0;
    const failing = new Readable({
      read() {
        if (sent > PART_SIZE + 1024) return this.destroy(new Error('client went away'));
        sent += 65536;
        this.push(randomBytes(65536));
      },
    });
    await expect(store.put('up/broken.bin', failing)).rejects.toThrow('client went away');
    expect(await store.stat('up/broken.bin')).toBeUndefined();
    const pending: string[] = [];
    for await (const u of store.client.listIncompleteUploads(bucket, 'up/', true)) pending.push(u.key);
    expect(pending).toEqual([]);
  });

  it('lists objects under a prefix older than a date, up to a limit', async () => {
    await store.put('list/1', Buffer.from('1'));
    await store.put('list/2', Buffer.from('2'));
    await store.put('other/3', Buffer.from('3'));
    const later = new Date(Date.now() + 60_000);
    expect((await store.listOlderThan('list/', later, 10)).map((o) => o.key).sort()).toEqual([
      'list/1',
      'list/2',
    ]);
    expect(await store.listOlderThan('list/', later, 1)).toHaveLength(1);
    expect(await store.listOlderThan('list/', new Date(Date.now() - 3_600_000), 10)).toEqual([]);
  });

  it('keeps the lifecycle rules it sets (expiry by prefix, abort of stale multipart uploads)', async () => {
    await setBucketLifecycle(store.client, bucket, [
      { id: 'uploads-retention', prefix: 'videos/', days: 90 },
    ]);
    // minio-js parses a single <Rule> as an object, several as an array.
    const rules = [(await store.client.getBucketLifecycle(bucket))?.Rule ?? []].flat();
    expect(rules).toEqual([
      expect.objectContaining({
        ID: 'uploads-retention',
        Status: 'Enabled',
        Filter: { Prefix: 'videos/' },
        Expiration: { Days: 90 },
      }),
    ]);
  });
});
