import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'minio';
import { minioClientOptions } from '@vision/shared';
import type { DistributedStack } from './distributed';
import type { TestStack } from './stack';

/** Files under `dir`, recursively, relative to it ([] when it does not exist). */
function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

/**
 * Every object under `prefix` the stack's object store holds, with unfinished multipart uploads
 * (`incomplete:<key>`) and, in standalone, temporary files: what a vanished client must not leave.
 */
export async function storedObjects(stack: TestStack, prefix = ''): Promise<string[]> {
  if (stack.kind === 'standalone')
    return filesUnder(path.join(stack.dataDir, 'objects')).filter((f) => f.startsWith(prefix));
  const d = (stack as DistributedStack).deployment;
  const client = new Client({
    ...minioClientOptions(d.stack.s3Endpoint),
    accessKey: d.stack.s3AccessKey,
    secretKey: d.stack.s3SecretKey,
    region: 'us-east-1',
    pathStyle: true,
  });
  const names: string[] = [];
  for await (const item of client.listObjectsV2(d.bucket, prefix, true) as AsyncIterable<{ name?: string }>)
    if (item.name) names.push(item.name);
  return [...names, ...(await incompleteUploads(client, d.bucket, prefix))];
}

/**
 * The keys of the unfinished multipart uploads under `prefix`. minio's listing asks for each upload's parts
 * after listing it: an upload aborted in between (what a test waits for) fails that with NoSuchUpload, and
 * the listing is taken again.
 */
async function incompleteUploads(client: Client, bucket: string, prefix: string): Promise<string[]> {
  for (;;) {
    const keys: string[] = [];
    try {
      for await (const u of client.listIncompleteUploads(bucket, prefix, true) as AsyncIterable<{
        key?: string;
      }>)
        if (u.key) keys.push(`incomplete:${u.key}`);
      return keys;
    } catch (err) {
      if ((err as { code?: string }).code !== 'NoSuchUpload') throw err;
    }
  }
}
