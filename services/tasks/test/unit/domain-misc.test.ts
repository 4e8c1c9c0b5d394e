import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SNIFF_BYTES, sniffVideoContainer } from '../../src/domain/ftyp';
import { fingerprintOf, plainUrlFingerprintOf } from '../../src/domain/fingerprint';
import { StreamUrlSeal } from '../../src/store/stream-url-seal';
import { decodeCursor, encodeCursor } from '../../src/domain/cursor';
import { resultExpiresAt } from '../../src/domain/retention';
import { rateLimitHeaders } from '../../src/domain/rate-limit-headers';
import { toPublicTask } from '../../src/domain/task-view';
import { loadTasksConfig } from '../../src/config';
import { VIDEO_UPLOAD } from '@vision/shared';

const media = path.resolve(
  process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../../../shared'),
  'media',
);
const head = (f: string) => readFileSync(path.join(media, f)).subarray(0, SNIFF_BYTES);

describe('ftyp sniffing', () => {
  test('real MP4 and MOV files are recognised by content', () => {
    expect(sniffVideoContainer(head('videos/pedestrians_vtest_opencv.mp4'))).toBe('mp4');
    expect(sniffVideoContainer(head('videos/pedestrians_vtest_opencv_10s.mov'))).toBe('mov');
  });
  test('other content is refused', () => {
    expect(
      sniffVideoContainer(Buffer.from('this is a text file that only pretends to be an mp4')),
    ).toBeUndefined();
    expect(sniffVideoContainer(Buffer.alloc(64))).toBeUndefined();
    const heic = Buffer.alloc(32);
    heic.writeUInt32BE(24, 0);
    heic.write('ftypheic', 4, 'latin1');
    heic.write('mif1heic', 16, 'latin1');
    expect(sniffVideoContainer(heic)).toBeUndefined();
  });
});

describe('fingerprints and keys', () => {
  test('meaning decides the fingerprint', () => {
    const a = fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: 'd1' });
    expect(fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: 'd1' })).toBe(a);
    expect(fingerprintOf({ endpoint: 'tasks', scene_code: 'fire_smoke', stream_url_digest: 'd1' })).not.toBe(
      a,
    );
    expect(fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: 'd2' })).not.toBe(a);
    expect(
      fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: 'd1', rules: '[]' }),
    ).not.toBe(a);
    expect(fingerprintOf({ endpoint: 'video-tasks', scene_code: 'ship', file_sha256: 'd1' })).not.toBe(a);
  });
  test("a stream task's fingerprint holds the URL's keyed digest: without the key, the URL cannot be tried against it", () => {
    const url = 'rtsp://cam:hunter2@10.0.0.5/live';
    const mine = new StreamUrlSeal('k'.repeat(32));
    const fp = fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: mine.digest(url) });
    // The same key gives the same fingerprint; another key, or the plain URL (the earlier rule), another.
    expect(
      fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: mine.digest(url) }),
    ).toBe(fp);
    const theirs = new StreamUrlSeal('x'.repeat(32));
    expect(
      fingerprintOf({ endpoint: 'tasks', scene_code: 'ship', stream_url_digest: theirs.digest(url) }),
    ).not.toBe(fp);
    expect(plainUrlFingerprintOf({ scene_code: 'ship', stream_url: url })).not.toBe(fp);
    // The earlier rule, unchanged: SHA-256 of the plain URL (claims stored by an earlier release).
    expect(plainUrlFingerprintOf({ scene_code: 'ship', stream_url: url })).toBe(
      createHash('sha256')
        .update(JSON.stringify(['POST /v1/vision/tasks', 'ship', url]))
        .digest('hex'),
    );
  });
  test('cursors round-trip and reject junk', () => {
    const c = encodeCursor({ createdAt: '2026-01-01T00:00:00.000Z', taskId: 'abc' });
    expect(decodeCursor(c)).toEqual({ createdAt: '2026-01-01T00:00:00.000Z', taskId: 'abc' });
    expect(decodeCursor('nope')).toBeUndefined();
    expect(decodeCursor(Buffer.from('["x",1]').toString('base64url'))).toBeUndefined();
  });
});

test('results expire 90 days after creation', () => {
  expect(resultExpiresAt(new Date('2026-01-01T00:00:00Z')).toISOString()).toBe('2026-04-01T00:00:00.000Z');
});

test('RateLimit headers follow the draft structured-field form', () => {
  const h = rateLimitHeaders(
    { limit: 5, remaining: 3, resets_at: '2026-01-01T16:00:00.000Z' },
    new Date('2026-01-01T15:00:00Z'),
  );
  expect(h).toEqual({
    'RateLimit-Policy': '"video-daily";q=5;w=86400',
    RateLimit: '"video-daily";r=3;t=3600',
  });
});

test('public task view has the SPEC fields and reason only when ended badly', () => {
  const base = {
    task_id: 't',
    request_id: 'r',
    scene_code: 'ship',
    kind: 'video',
    result_expires_at: new Date(0),
    created_at: new Date(0),
    updated_at: new Date(0),
  };
  expect(Object.keys(toPublicTask({ ...base, status: 'running', reason: 'x' })).sort()).toEqual(
    [
      'created_at',
      'kind',
      'request_id',
      'result_expires_at',
      'scene_code',
      'status',
      'task_id',
      'updated_at',
    ].sort(),
  );
  expect(toPublicTask({ ...base, status: 'failed', reason: 'backend_lost_job' }).reason).toBe(
    'backend_lost_job: the inference backend lost the job',
  );
  // A free-text reason stored before the closed list (an ffmpeg line naming a path) is never shown.
  expect(
    toPublicTask({
      ...base,
      status: 'failed',
      reason: '/var/data/objects/videos/ab/cd: Invalid data found when processing input',
    }).reason,
  ).toBe('internal_error: internal error');
});

describe('upload size limit', () => {
  test('defaults to 512 MB (SPEC 4.2), inside the gateway body cap with room for the multipart framing', () => {
    const max = loadTasksConfig({}).TASKS_MAX_VIDEO_BYTES;
    expect(max).toBe(512_000_000);
    expect(max).toBe(VIDEO_UPLOAD.maxFileBytes);
    expect(VIDEO_UPLOAD.framingBytes).toBe(1024 * 1024);
  });
});
