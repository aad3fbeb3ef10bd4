import sharp from "sharp";
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

/**
 * A photo-like PNG of `width` × `height`: smooth colour noise, so that a 64 MP original (about
 * 21 MB) stays under the 50 MiB upload limit. `seed` changes its bytes (its stated density), not its pixels.
 */
export async function smoothPng(width: number, height: number, seed: number): Promise<Buffer> {
  const small = await sharp({ create: { width: Math.ceil(width / 256), height: Math.ceil(height / 256), channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 50 } } })
    .png()
    .toBuffer();
  return sharp(small).resize(width, height, { kernel: "cubic" }).png({ compressionLevel: 6 }).withMetadata({ density: 72 + seed }).toBuffer();
}

/**
 * An alpha mask as ComfyUI's mask editor uploads it: the original's size, opaque, with
 * transparent (masked) discs; `seed` moves them.
 */
export function discMaskPng(width: number, height: number, seed: number): Promise<Buffer> {
  const discs = Array.from({ length: 6 }, (_, i) => {
    const x = ((seed * 7919 + i * 104729) % 1000) / 1000;
    const y = ((seed * 104729 + i * 7919) % 1000) / 1000;
    return `<circle cx="${Math.round(x * width)}" cy="${Math.round(y * height)}" r="${Math.round(Math.min(width, height) / 10)}"/>`;
  });
  const svg = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${discs.join("")}</svg>`);
  return sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 1 } }, limitInputPixels: false })
    .composite([{ input: svg, blend: "dest-out", limitInputPixels: false }])
    .png()
    .toBuffer();
}
