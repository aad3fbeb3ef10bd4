/**
 * Asset names are `<blake3 hex>.<ext>`, the extension coming from the format sharp detected in
 * the bytes. Only raster formats a browser can be trusted to show are accepted (no SVG or PDF:
 * they could carry script or cost a renderer dearly).
 */

export const HASH_RE = /^[0-9a-f]{64}$/;

export interface ImageFormat {
  ext: string;
  mime: string;
}

const FORMATS: Record<string, ImageFormat> = {
  png: { ext: "png", mime: "image/png" },
  jpeg: { ext: "jpg", mime: "image/jpeg" },
  webp: { ext: "webp", mime: "image/webp" },
  gif: { ext: "gif", mime: "image/gif" },
  avif: { ext: "avif", mime: "image/avif" },
  tiff: { ext: "tiff", mime: "image/tiff" },
};

const BY_EXT = new Map(Object.values(FORMATS).map((f) => [f.ext, f]));

/** sharp reports AVIF as `heif` with `av1` compression; HEIC (hevc) cannot be decoded by the bundled libvips. */
export function formatFromSharp(format: string | undefined, compression: string | undefined): ImageFormat | null {
  if (format === "heif") return compression === "av1" ? FORMATS.avif! : null;
  return format ? (FORMATS[format] ?? null) : null;
}

export function formatFromExt(ext: string): ImageFormat | null {
  return BY_EXT.get(ext) ?? null;
}

export function assetName(hash: string, ext: string): string {
  return `${hash}.${ext}`;
}

const NAME_RE = /^([0-9a-f]{64})\.([a-z0-9]{2,5})(?: \[(?:input|output|temp)\])?$/;

/**
 * Parse a name this service returned, optionally with ComfyUI's ` [input]`-style suffix.
 * Anything else (paths, other hashes, odd extensions) is refused: names never become paths.
 */
export function parseAssetName(name: string): { hash: string; ext: string } | null {
  const m = NAME_RE.exec(name.trim());
  if (!m || !formatFromExt(m[2]!)) return null;
  return { hash: m[1]!, ext: m[2]! };
}
