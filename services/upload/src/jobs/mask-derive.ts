import { Readable } from "node:stream";
import sharp from "sharp";
import type { JobResult, MaskType } from "@app/contracts";
import { UnrecoverableJobError, type JobHandler } from "@app/jobs";
import type { Logger } from "@app/platform";
import { BlobNotFoundError, type BlobStore } from "../adapters/blob-store.ts";
import { MAX_PIXELS } from "../adapters/image-probe.ts";
import { mergeRecord } from "../domain/asset-record.ts";
import { paintAlpha, paintedAlpha } from "../domain/mask.ts";
import { assetName } from "../domain/naming.ts";

export interface MaskDeriveDeps {
  store: BlobStore;
  logger?: Logger;
  /** sharp pipelines running at once in this process (each may hold a 64 MP image). */
  concurrency?: number;
}

/**
 * The `mask.derive` job: reads the original and the mask, applies the mask rules of
 * `domain/mask.ts` with sharp, and stores `painted` and `paint` as content-addressed PNGs tagged
 * `derived`, `original:<hash>`, `mask:<hash>`. Deterministic, so a rerun writes nothing new.
 */
export function createMaskDeriveHandler(deps: MaskDeriveDeps): JobHandler<"mask.derive"> {
  const gate = new Semaphore(deps.concurrency ?? 2);
  return async ({ originalHash, maskHash }) =>
    gate.run(async () => {
      const [original, mask] = await Promise.all([readBlob(deps.store, originalHash), readBlob(deps.store, maskHash)]);
      let derived: { painted: Buffer; paint: Buffer; width: number; height: number; maskType: MaskType };
      try {
        derived = await derive(original, mask);
      } catch (err) {
        // The client's bytes: no retry can decode them. The code reaches the route (400 invalid_image).
        throw new UnrecoverableJobError(`cannot decode the original or the mask: ${(err as Error).message}`, "invalid_image");
      }
      const tags = ["derived", `original:${originalHash}`, `mask:${maskHash}`];
      const [painted, paint] = await Promise.all([
        storePng(deps.store, derived.painted, derived.width, derived.height, [...tags, "painted"]),
        storePng(deps.store, derived.paint, derived.width, derived.height, [...tags, "paint"]),
      ]);
      deps.logger?.debug({ originalHash, maskHash, maskType: derived.maskType }, "mask derivatives stored");
      const result: JobResult<"mask.derive"> = { maskType: derived.maskType, painted, paint };
      return result;
    });
}

async function derive(original: Buffer, mask: Buffer) {
  const opts = { limitInputPixels: MAX_PIXELS, failOn: "error" as const };
  const meta = await sharp(original, opts).metadata();
  // Sized as displayed: EXIF orientations 5-8 swap the edges (the output is rotated to match).
  const swap = (meta.orientation ?? 1) >= 5;
  const width = swap ? meta.height! : meta.width!;
  const height = swap ? meta.width! : meta.height!;
  const maskMeta = await sharp(mask, opts).metadata();
  const maskType: MaskType = maskMeta.hasAlpha ? "alpha" : "luminance";
  const resized = sharp(mask, opts).rotate().resize(width, height, { fit: "fill", kernel: "linear" }); // linear: no ringing at mask edges
  const channel =
    maskType === "alpha"
      ? await resized.toColourspace("srgb").ensureAlpha().extractChannel(3).raw({ depth: "uchar" }).toBuffer()
      : await resized.toColourspace("b-w").extractChannel(0).raw({ depth: "uchar" }).toBuffer();
  const alpha = paintedAlpha(maskType, channel);
  // The original's RGB (3 bytes a pixel) and the alpha planes (1 byte each) are all that is held;
  // sharp joins and encodes from them. (removeAlpha + joinChannel in one pipeline would drop the
  // joined alpha: sharp removes alpha after joining.)
  const rgb = await sharp(original, opts).rotate().toColourspace("srgb").removeAlpha().raw({ depth: "uchar" }).toBuffer();
  const plane = { raw: { width, height, channels: 1 as const } };
  const [paintedPng, paintPng] = await Promise.all([
    sharp(rgb, { raw: { width, height, channels: 3 } }).joinChannel(alpha, plane).png({ compressionLevel: 6 }).toBuffer(),
    sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
      .joinChannel(paintAlpha(alpha), plane)
      .png({ compressionLevel: 6 })
      .toBuffer(),
  ]);
  return { painted: paintedPng, paint: paintPng, width, height, maskType };
}

async function storePng(store: BlobStore, png: Buffer, width: number, height: number, tags: string[]): Promise<string> {
  const staged = await store.stage(Readable.from([png]));
  await staged.commit((existing) =>
    mergeRecord(existing, { hash: staged.hash, ext: "png", mime: "image/png", size: staged.size, width, height, tags }),
  );
  return assetName(staged.hash, "png");
}

async function readBlob(store: BlobStore, hash: string): Promise<Buffer> {
  try {
    const chunks: Buffer[] = [];
    for await (const c of await store.read(hash)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    if (err instanceof BlobNotFoundError) throw new UnrecoverableJobError(`no stored image ${hash}`, "original_not_found");
    throw err;
  }
}

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
