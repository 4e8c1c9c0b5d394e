/** Recognises MP4 and MOV files by content: an ISO base media file starts with an `ftyp` box. Pure. */

/** Brands of video files (MP4 family, QuickTime MOV, 3GPP). HEIF/AVIF images and others are refused. */
const VIDEO_BRANDS = new Set([
  'isom',
  'iso2',
  'iso3',
  'iso4',
  'iso5',
  'iso6',
  'iso7',
  'iso8',
  'iso9',
  'mp41',
  'mp42',
  'mp71',
  'avc1',
  'hvc1',
  'hev1',
  'av01',
  'qt  ',
  'M4V ',
  'M4VH',
  'M4VP',
  'MSNV',
  'dash',
  'f4v ',
  'mmp4',
  '3gp4',
  '3gp5',
  '3gp6',
  '3gp7',
  '3gg6',
  '3g2a',
  'XAVC',
]);

export type VideoContainer = 'mp4' | 'mov';

/** How many leading bytes `sniffVideoContainer` wants to see (a typical ftyp box fits easily). */
export const SNIFF_BYTES = 64;

/**
 * Reads the ftyp box at the start of `head`. Returns the container, or undefined when the bytes are not
 * an MP4/MOV file. `head` may be shorter than SNIFF_BYTES when the file is.
 */
export function sniffVideoContainer(head: Buffer): VideoContainer | undefined {
  if (head.length < 16) return undefined;
  if (head.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  const size = head.readUInt32BE(0);
  if (size < 16 || size > 4096 || (size - 8) % 4 !== 0) return undefined;
  const end = Math.min(size, head.length);
  const major = head.toString('latin1', 8, 12);
  const brands = [major];
  for (let i = 16; i + 4 <= end; i += 4) brands.push(head.toString('latin1', i, i + 4));
  if (!brands.some((b) => VIDEO_BRANDS.has(b))) return undefined;
  return major === 'qt  ' ? 'mov' : 'mp4';
}
