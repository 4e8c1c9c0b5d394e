/**
 * Test helpers: a valid PNG grown to an exact byte size with a private ancillary chunk before IEND, and a tiny
 * PNG whose header declares any size (a decompression bomb's header without its bytes).
 */
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** `png` (a complete PNG) with a `paDd` chunk so that the file is exactly `size` bytes long. */
export function pngOfSize(png: Buffer, size: number): Buffer {
  const iend = png.length - 12; // the IEND chunk: length, type, no data, CRC
  if (png.subarray(iend + 4, iend + 8).toString('latin1') !== 'IEND') throw new Error('not a plain PNG');
  const dataLength = size - png.length - 12;
  if (dataLength < 0) throw new Error('the PNG is already larger than that');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(dataLength, 0);
  head.write('paDd', 4, 'latin1');
  const body = Buffer.concat([head.subarray(4), Buffer.alloc(dataLength, 0x20)]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([png.subarray(0, iend), head.subarray(0, 4), body, crc, png.subarray(iend)]);
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length, 0);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([len, body, crc]);
}

/**
 * A PNG of under 100 bytes whose header declares `width` x `height` pixels (1-bit grey). Only its first
 * row is there, so a reader of the header sees the full size and a decoder fails: a size check answers
 * with its own reason, and a missing one shows up as a decode error instead.
 */
export function pngDeclaring(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth; colour type 0 (grey), compression, filter and interlace 0
  const firstRow = Buffer.alloc(1 + Math.ceil(width / 8)); // filter byte + packed pixels
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(firstRow)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
