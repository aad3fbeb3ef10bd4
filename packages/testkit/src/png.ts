import sharp from "sharp";
import { crc32, deflateSync } from "node:zlib";

/**
 * The tests' images, all made here: noise (distinct bytes every call), a solid colour, a PNG whose
 * body is corrupt, and hand-built PNGs (node:zlib only, so fast tests in any package can use
 * them): a small valid RGB image whose pixels follow `seed` (distinct seeds give distinct bytes),
 * and a file whose header claims any size over a tiny body, which is what a decompression bomb looks like.
 */

export type Ext = "png" | "jpg" | "webp";

/** Distinct content on every call (random noise), so tests and runs never collide on a hash. */
export async function noiseImage(width: number, height: number, ext: Ext = "png"): Promise<Buffer> {
  const img = sharp({ create: { width, height, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } } });
  if (ext === "jpg") return img.jpeg({ quality: 80 }).toBuffer();
  if (ext === "webp") return img.webp({ quality: 80 }).toBuffer();
  return img.png({ compressionLevel: 1 }).toBuffer();
}

/** A noise PNG: distinct content on every call. */
export const noisePng = (width: number, height: number): Promise<Buffer> => noiseImage(width, height, "png");

/** A PNG of one colour (RGB, or RGBA when `alpha` is given): the same bytes for the same arguments. */
export function solidPng(width: number, height: number, rgba: { r: number; g: number; b: number; alpha?: number }): Promise<Buffer> {
  const channels = rgba.alpha === undefined ? 3 : 4;
  return sharp({ create: { width, height, channels, background: { ...rgba, alpha: rgba.alpha ?? 1 } } })
    .png()
    .toBuffer();
}

/** A PNG of exactly these pixels (row-major, `channels` bytes each): for tests that read pixels back. */
export function pixelPng(pixels: Buffer | number[], width: number, height: number, channels: 1 | 2 | 3 | 4): Promise<Buffer> {
  return sharp(Buffer.from(pixels), { raw: { width, height, channels } }).png().toBuffer();
}

/**
 * A PNG whose header is whole and whose pixel data is not: the upload's header check accepts it,
 * a full decode (the mask job's) refuses it.
 */
export async function corruptBodyPng(width: number, height: number): Promise<Buffer> {
  const png = Buffer.from(await noisePng(width, height));
  const idat = png.indexOf("IDAT");
  png.fill(0xff, idat + 40, idat + 120);
  return png;
}

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
  return Buffer.concat([
    SIGNATURE,
    chunk("IHDR", ihdr(width, height, 2)),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A valid-looking grayscale PNG whose IHDR claims `width`×`height` over 1 KiB of pixels. */
export function pngClaiming(width: number, height: number): Buffer {
  return Buffer.concat([
    SIGNATURE,
    chunk("IHDR", ihdr(width, height, 0)),
    chunk("IDAT", deflateSync(Buffer.alloc(1024))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A photo-like PNG of `width` × `height`: smooth colour noise, so that a 64 MP original (about
 * 21 MB) stays under the 50 MiB upload limit. `seed` changes its bytes (its stated density), not its pixels.
 */
export async function smoothPng(width: number, height: number, seed: number): Promise<Buffer> {
  const small = await sharp({
    create: {
      width: Math.ceil(width / 256),
      height: Math.ceil(height / 256),
      channels: 3,
      background: "#000",
      noise: { type: "gaussian", mean: 128, sigma: 50 },
    },
  })
    .png()
    .toBuffer();
  return sharp(small)
    .resize(width, height, { kernel: "cubic" })
    .png({ compressionLevel: 6 })
    .withMetadata({ density: 72 + seed })
    .toBuffer();
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
