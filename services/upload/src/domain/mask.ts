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
export function paintedAlpha(maskType: MaskType, channel: Buffer): Buffer {
  if (maskType === "alpha") return channel;
  const out = Buffer.alloc(channel.length);
  for (let i = 0; i < channel.length; i++) out[i] = 255 - channel[i]!;
  return out;
}

/** The paint layer's alpha: 255 − P (its RGB is black). */
export function paintAlpha(painted: Uint8Array): Buffer {
  const out = Buffer.alloc(painted.length);
  for (let i = 0; i < painted.length; i++) out[i] = 255 - painted[i]!;
  return out;
}
