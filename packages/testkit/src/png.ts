import { crc32, deflateSync } from "node:zlib";

/**
 * Hand-built PNGs (node:zlib only, so fast tests in any package can use them): a small valid
 * RGB image whose pixels follow `seed` (distinct seeds give distinct bytes), and a file whose
 * header claims any size over a tiny body, which is what a decompression bomb looks like.
 */
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td) >>> 0);
  return Buffer.concat([len, td, crc]);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number, colourType: number): Buffer {
  const h = Buffer.alloc(13);
  h.writeUInt32BE(width, 0);
  h.writeUInt32BE(height, 4);
  h[8] = 8;
  h[9] = colourType;
  return h;
}

export function tinyPng(seed: number, width = 8, height = 8): Buffer {
  const rows: Buffer[] = [];
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let i = 1; i < row.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      row[i] = x & 0xff;
    }
    rows.push(row);
  }
  return Buffer.concat([SIGNATURE, chunk("IHDR", ihdr(width, height, 2)), chunk("IDAT", deflateSync(Buffer.concat(rows))), chunk("IEND", Buffer.alloc(0))]);
}

/** A valid-looking grayscale PNG whose IHDR claims `width`×`height` over 1 KiB of pixels. */
export function pngClaiming(width: number, height: number): Buffer {
  return Buffer.concat([SIGNATURE, chunk("IHDR", ihdr(width, height, 0)), chunk("IDAT", deflateSync(Buffer.alloc(1024))), chunk("IEND", Buffer.alloc(0))]);
}
