import { deflateSync } from 'node:zlib';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** A chunk's length, type and CRC: 12 bytes around its data. */
const CHUNK_OVERHEAD = 12;

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let crc = byte;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  return crc >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(CHUNK_OVERHEAD + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** A small bar chart, 96×64 RGB: five bars on white, so a preview of the sample shows a picture. */
function chartPixels(width: number, height: number): Uint8Array {
  const heights = [0.35, 0.6, 0.45, 0.8, 0.7];
  const rows = new Uint8Array((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) {
      const bar = Math.floor((x - 8) / 16);
      const inBar = x >= 8 && (x - 8) % 16 < 12 && bar < heights.length && y >= height - 4 - Math.round((heights[bar] ?? 0) * (height - 8)) && y < height - 4;
      const [r, g, b] = inBar ? [0x2f, 0x6f, 0xdb] : y === height - 4 ? [0x88, 0x88, 0x88] : [0xff, 0xff, 0xff];
      rows.set([r, g, b], row + 1 + x * 3);
    }
  }
  return rows;
}

/**
 * A valid PNG of exactly `size` bytes when `size` leaves room for the padding chunk (255 bytes or more;
 * below, the bare picture of 243 bytes): a small bar chart, padded with a private ancillary chunk that
 * decoders skip. So an `image/png` sample given only
 * by its size downloads at that size and previews as an image, not a broken one.
 */
export function fillerPng(size: number): Uint8Array<ArrayBuffer> {
  const width = 96;
  const height = 64;
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8);
  const parts = [Uint8Array.from(PNG_SIGNATURE), chunk('IHDR', header), chunk('IDAT', deflateSync(chartPixels(width, height)))];
  const end = chunk('IEND', new Uint8Array(0));
  const length = parts.reduce((sum, part) => sum + part.length, end.length);
  const padding = size - length - CHUNK_OVERHEAD;
  if (padding >= 0) parts.push(chunk('flPd', new Uint8Array(padding).fill(0x2e)));
  parts.push(end);
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
