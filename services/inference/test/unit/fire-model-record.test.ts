/**
 * The committed fire/smoke model and what the service serves with it agree with its provenance record
 * (models/fire_smoke_yolox_nano.json, written by training/fire_smoke/export.py and calibrate.py): the
 * default scene lower bound is the one calibrate.py chose on firesmoke-val, and the file is the one hashed.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FIRE_SMOKE_DEFAULT_LOWER_BOUND, FIRE_SMOKE_DEFAULT_MODEL } from '../../src/catalogue/scene-config';

const MODELS = path.resolve(__dirname, '../../../../models');

interface FireModelRecord {
  model: string;
  sha256: string;
  bytes: number;
  firesmoke_val: { lower_bound: number; rule?: string };
}

const record = JSON.parse(
  fs.readFileSync(path.join(MODELS, FIRE_SMOKE_DEFAULT_MODEL.replace(/\.onnx$/, '.json')), 'utf8'),
) as FireModelRecord;

describe('fire_smoke model record', () => {
  it('serves the lower bound calibrate.py chose on firesmoke-val', () => {
    expect(FIRE_SMOKE_DEFAULT_LOWER_BOUND).toBe(record.firesmoke_val.lower_bound);
  });

  it('describes the committed file (sha256, size, at most 4 MB)', () => {
    const bytes = fs.readFileSync(path.join(MODELS, record.model));
    expect(record.model).toBe(FIRE_SMOKE_DEFAULT_MODEL);
    expect(bytes.length).toBe(record.bytes);
    expect(bytes.length).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(record.sha256);
  });
});
