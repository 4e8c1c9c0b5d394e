/** Test helper: a valid PNG grown to an exact byte size with a private ancillary chunk before IEND. */
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
