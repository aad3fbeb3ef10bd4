import type { MaskType } from "@app/contracts";

/**
 * Mask rules, on raw 8-bit pixels (pure, so they are unit-testable without sharp).
 *
 * The "painted alpha" P of each pixel:
 *  - `alpha` masks (the mask has an alpha channel, as ComfyUI's mask editor writes): P = the
 *    mask's alpha (transparent = masked);
 *  - `luminance` masks (no alpha: black and white, grayscale): P = 255 − luminance (white = masked,
 *    as in a ComfyUI MASK where 1 = masked).
 *
 * painted = the original's RGB with its alpha replaced by P (what ComfyUI's local API produces).
 * paint   = a layer of the original's size: RGB (0, 0, 0), alpha = 255 − P, i.e. black exactly as
 *           opaque as the pixel is masked and fully transparent where it is not, so a UI can lay it
 *           over the original to show the masked region.
 */
export function paintedAlpha(maskType: MaskType, channel: Uint8Array): Uint8Array {
  if (maskType === "alpha") return channel;
  const out = new Uint8Array(channel.length);
  for (let i = 0; i < channel.length; i++) out[i] = 255 - channel[i]!;
  return out;
}

/** Both derivatives from the original's RGBA pixels and the painted alpha (one byte a pixel). */
export function composeDerivatives(originalRgba: Uint8Array, alpha: Uint8Array): { painted: Buffer; paint: Buffer } {
  const pixels = alpha.length;
  if (originalRgba.length !== pixels * 4) throw new Error("original and mask sizes differ");
  const painted = Buffer.from(originalRgba);
  const paint = Buffer.alloc(pixels * 4);
  for (let i = 0; i < pixels; i++) {
    const a = alpha[i]!;
    painted[i * 4 + 3] = a;
    paint[i * 4 + 3] = 255 - a;
  }
  return { painted, paint };
}
