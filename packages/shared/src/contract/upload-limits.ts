/** The upload limits of SPEC.md section 8, in one place (services' configuration defaults read these). */
const MiB = 1024 * 1024;

export const IMAGE_UPLOAD = {
  /** "at most 8 MiB per image": a file of exactly this many bytes is accepted. */
  maxFileBytes: 8 * MiB,
  /** "total request body at most 81 MiB". */
  maxBodyBytes: 81 * MiB,
  /** "1..10 images". */
  maxFiles: 10,
  /**
   * Decoded pixels per image (width x height, read from the header before decoding), against decompression
   * bombs: one figure for images' check and inference's decoder, so that an image images accepts is one
   * inference decodes (40 M: a 8000 x 5000 photo; about 120 MB once decoded).
   */
  maxPixels: 40_000_000,
  fileField: 'files',
  valueFields: ['scene_code'],
} as const;

export const VIDEO_UPLOAD = {
  /** "at most 512 MB per file" (decimal megabytes). */
  maxFileBytes: 512 * 1000 * 1000,
  /** Room for the multipart framing and the scene_code field around the file. */
  framingBytes: MiB,
  fileField: 'file',
  /** `zones` and `lines` are JSON arrays of rules (docs/ANALYTICS.md), sent before the file. */
  valueFields: ['scene_code', 'zones', 'lines'],
  /** Largest value field: room for 20 rules of 32 vertices written out in full. */
  maxFieldBytes: 64 * 1024,
} as const;
