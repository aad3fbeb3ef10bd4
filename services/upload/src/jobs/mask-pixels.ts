import { join } from "node:path";
import sharp, { type Metadata, type Sharp } from "sharp";
import type { MaskType } from "@app/contracts";
import { MAX_PIXELS } from "../adapters/probes/image-probe.ts";

/**
 * The mask rules, done by libvips (sharp) from files to files: no pixel passes through JavaScript.
 *
 * The "painted alpha" P of each pixel:
 *  - `alpha` masks (the mask has an alpha channel, as ComfyUI's mask editor writes): P = the
 *    mask's alpha (transparent = masked);
 *  - `luminance` masks (no alpha: black and white, grayscale): P = 255 − luminance (white = masked,
 *    as in a ComfyUI MASK where 1 = masked).
 * The mask is first oriented (EXIF) and resized to the original's displayed size (`fill`, linear).
 *
 * painted = the original's RGB with its alpha replaced by P (what ComfyUI's local API produces).
 * paint   = a layer of the original's size: RGB (0, 0, 0), alpha = 255 − P, i.e. black exactly as
 *           opaque as the pixel is masked and fully transparent where it is not, so a UI can lay it
 *           over the original to show the masked region.
 *
 * 255 − x is libvips' `invert` on 8-bit bands (`negate`), exact: the pixels are those of the
 * earlier version, which computed 255 − x in JavaScript, and so are the PNG bytes, except that
 * `painted` now keeps the original's resolution in its pHYs chunk where the earlier one always
 * wrote 1 px/mm (so a JPEG's derivatives get new names once). test/mask-pixels.test.ts.
 */
export interface MaskFiles {
  original: string;
  mask: string;
  /** A directory of the job's own for intermediate and output files. */
  scratch: string;
}

export interface PaintLayers {
  /** Paths of the two PNGs, in `scratch`. */
  painted: string;
  paint: string;
  width: number;
  height: number;
  maskType: MaskType;
}

const INPUT = { limitInputPixels: MAX_PIXELS, failOn: "error" } as const;
const PNG = { compressionLevel: 6 } as const;

/** The original's pixel count, from its header (what a job will hold in memory scales with it). */
export async function displayedPixels(original: string): Promise<number> {
  const { width, height } = displayedSize(await sharp(original, INPUT).metadata());
  return width * height;
}

/** Sized as displayed: EXIF orientations 5-8 swap the edges (the output is rotated to match). */
function displayedSize(meta: Metadata): { width: number; height: number } {
  const swap = (meta.orientation ?? 1) >= 5;
  return { width: swap ? meta.height : meta.width, height: swap ? meta.width : meta.height };
}

export async function derivePaintLayers(files: MaskFiles): Promise<PaintLayers> {
  const meta = await sharp(files.original, INPUT).metadata();
  const { width, height } = displayedSize(meta);
  const maskType: MaskType = (await sharp(files.mask, INPUT).metadata()).hasAlpha ? "alpha" : "luminance";
  const alpha = join(files.scratch, "alpha.v");
  await paintedAlphaPlane(files.mask, maskType, width, height).toFile(alpha);
  const painted = join(files.scratch, "painted.png");
  const paint = join(files.scratch, "paint.png");
  // One pipeline at a time: a job holds one libuv thread (see maskSlots).
  await sharp(await rgbSource(files, meta), INPUT)
    .rotate()
    .joinChannel(alpha)
    .png(PNG)
    .toFile(painted);
  // White joined with P, every band inverted: (0, 0, 0, 255 − P).
  await sharp({ create: { width, height, channels: 3, background: { r: 255, g: 255, b: 255 } } })
    .joinChannel(alpha)
    .negate({ alpha: true })
    .png(PNG)
    .toFile(paint);
  return { painted, paint, width, height, maskType };
}

/**
 * P, one byte a pixel at the original's displayed size, to be written to a scratch file in
 * libvips' own format (read back as it is, uncompressed). Not a Buffer: 64 MiB of external
 * memory handed to JavaScript makes V8 run a full collection of the whole heap, a pause of the
 * event loop.
 */
function paintedAlphaPlane(mask: string, maskType: MaskType, width: number, height: number): Sharp {
  const resized = sharp(mask, INPUT).rotate().resize(width, height, { fit: "fill", kernel: "linear" }); // linear: no ringing at mask edges
  return maskType === "alpha"
    ? resized.toColourspace("srgb").ensureAlpha().extractChannel(3)
    : resized.toColourspace("b-w").extractChannel(0).negate();
}

/**
 * A file whose pixels, once oriented, are the original's 8-bit sRGB without alpha. Most
 * originals (8-bit RGB: JPEG, RGB PNG, WebP without alpha) are that already. Others (alpha,
 * grey, 16-bit, CMYK) are converted into a scratch PNG first: sharp applies `removeAlpha` and the
 * output colourspace after `joinChannel`, so one pipeline would drop the joined P.
 */
async function rgbSource(files: MaskFiles, meta: Metadata): Promise<string> {
  if (meta.channels === 3 && meta.depth === "uchar" && meta.space === "srgb") return files.original;
  const rgb = join(files.scratch, "rgb.png");
  // Stored, not compressed: it is read once, straight back.
  await sharp(files.original, INPUT)
    .rotate()
    .toColourspace("srgb")
    .removeAlpha()
    .png({ compressionLevel: 0, adaptiveFiltering: false })
    .toFile(rgb);
  return rgb;
}
