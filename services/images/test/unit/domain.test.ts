import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sniffImageType } from '../../src/domain/image-type';
import { requestFingerprint } from '../../src/domain/fingerprint';
import { imageObjectKey, resultExpiresAt, retentionCutoff } from '../../src/domain/object-key';
import { holdIdFor } from '../../src/domain/hold-id';
import {
  chargeableUnits,
  errorCodeFor,
  inUploadOrder,
  summarise,
  toImageObject,
  type ImageResult,
} from '../../src/domain/results';

const media = path.resolve(
  process.env.VISION_SHARED_DIR ?? path.resolve(__dirname, '../../../../../shared'),
  'media/images',
);
const head = (name: string) => readFileSync(path.join(media, name)).subarray(0, 12);

describe('sniffImageType', () => {
  it('recognises the shared JPEG, PNG and WEBP images by content', () => {
    expect(sniffImageType(head('sheep_coco5992.jpg'))).toBe('jpg');
    expect(sniffImageType(head('boat_sailboat_kodim06.png'))).toBe('png');
    expect(sniffImageType(head('none_brick_facade_kodim01.webp'))).toBe('webp');
  });
  it('refuses GIF, text, RIFF that is not WEBP, and short input', () => {
    expect(sniffImageType(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00', 'latin1'))).toBeUndefined();
    expect(sniffImageType(Buffer.from('hello, I am not a jpeg'))).toBeUndefined();
    expect(sniffImageType(Buffer.from('RIFF\x00\x00\x00\x00WAVE', 'latin1'))).toBeUndefined();
    expect(sniffImageType(Buffer.from([0xff, 0xd8]))).toBeUndefined();
  });
});

describe('requestFingerprint', () => {
  it('depends on the scene and on the file hashes in order', () => {
    const a = requestFingerprint('ship', ['h1', 'h2']);
    expect(requestFingerprint('ship', ['h1', 'h2'])).toBe(a);
    expect(requestFingerprint('fire_smoke', ['h1', 'h2'])).not.toBe(a);
    expect(requestFingerprint('ship', ['h2', 'h1'])).not.toBe(a);
    expect(requestFingerprint('ship', ['h1'])).not.toBe(a);
  });
});

describe('object keys and retention', () => {
  it('builds images/<day>/<task>/<seq>.<ext> and refuses unsafe task ids', () => {
    expect(imageObjectKey(new Date('2026-03-04T23:59:00Z'), 'abc-1', 3, 'png')).toBe(
      'images/2026-03-04/abc-1/3.png',
    );
    expect(() => imageObjectKey(new Date(), '../x', 0, 'jpg')).toThrow();
  });
  it('keeps 90 days', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    expect(retentionCutoff(now, 90).toISOString()).toBe('2026-03-03T00:00:00.000Z');
    expect(resultExpiresAt(now, 90).toISOString()).toBe('2026-08-30T00:00:00.000Z');
  });
});

describe('holdIdFor', () => {
  it('never reuses a hold id across attempts', () => {
    expect(holdIdFor('t', 0)).toBe('t');
    expect(holdIdFor('t', 1)).not.toBe(holdIdFor('t', 0));
    expect(holdIdFor('t', 2)).not.toBe(holdIdFor('t', 1));
  });
});

describe('results', () => {
  const results: ImageResult[] = [
    { seq: 1, status: 'failed', error_code: errorCodeFor('relay_failed') },
    { seq: 0, status: 'succeeded', objects: [] },
    { seq: 2, status: 'failed', error_code: errorCodeFor('inference_unavailable') },
  ];
  it('charges only succeeded images and summarises', () => {
    expect(chargeableUnits(results)).toBe(1);
    expect(summarise(results)).toEqual({ images: 3, succeeded: 1, failed: 2 });
  });
  it('maps failures to SPEC error codes', () => {
    expect(errorCodeFor('relay_failed')).toBe('OP-SYS-UNAVAILABLE');
    expect(errorCodeFor('inference_unavailable')).toBe('OP-TASK-UPSTREAM-DOWN');
    expect(errorCodeFor('inference_rejected')).toBe('OP-TASK-REQUEST-INVALID');
  });
  it('puts results in upload order and checks coverage', () => {
    expect(inUploadOrder(results, 3).map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(() => inUploadOrder(results, 4)).toThrow();
  });
  it('drops track_id and unknown fields from objects', () => {
    const o = toImageObject({
      label: 'boat',
      score: 0.7,
      bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.2, height: 0.1 },
      track_id: 't1',
    } as Parameters<typeof toImageObject>[0]);
    expect(o).toEqual({
      label: 'boat',
      score: 0.7,
      bbox: { format: 'cxcywh_normalized', cx: 0.5, cy: 0.5, width: 0.2, height: 0.1 },
    });
    expect('track_id' in o).toBe(false);
  });
});
