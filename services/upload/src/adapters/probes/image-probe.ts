import sharp from "sharp";
import { ApiFailure } from "../../domain/errors.ts";
import { formatFromSharp, type ImageFormat } from "../../domain/naming.ts";

export const MAX_EDGE = 16_384;
/** 64 megapixels, as 8192 × 8192. */
export const MAX_PIXELS = 8192 * 8192;

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
  hasAlpha: boolean;
}

/**
 * What the bytes are, read from their header by sharp (never from the declared MIME type or
 * filename). Only the header is parsed, so a decompression bomb is refused by its declared
 * size without being decoded; a full decode happens in the mask job, under the pixel limit.
 */
export async function probeImage(input: string | Buffer): Promise<ImageInfo> {
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw new ApiFailure("invalid_image", "the image part is not a decodable image");
  }
  const format = formatFromSharp(meta.format, meta.compression);
  if (!format) {
    throw new ApiFailure(
      "invalid_image",
      `the image part is ${meta.format ?? "an unknown format"}; accepted: png, jpeg, webp, gif, avif, tiff`,
    );
  }
  const { width, height } = meta;
  if (!width || !height) throw new ApiFailure("invalid_image", "the image part has no dimensions");
  if (width > MAX_EDGE || height > MAX_EDGE || width * height > MAX_PIXELS) {
    throw new ApiFailure(
      "image_too_large",
      `the image is ${width}×${height}; the limits are ${MAX_EDGE} px an edge and ${MAX_PIXELS} pixels (64 megapixels)`,
    );
  }
  return { format, width, height, hasAlpha: meta.hasAlpha ?? false };
}
