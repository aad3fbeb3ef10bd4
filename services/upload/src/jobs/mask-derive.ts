import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import sharp from "sharp";
import type { JobResult } from "@app/contracts";
import { UnrecoverableJobError, type JobHandler } from "@app/jobs";
import type { Logger } from "@app/platform";
import { BlobNotFoundError, mergeSidecar, type BlobStore } from "@app/blobs";
import { assetName } from "../domain/naming.ts";
import { MAX_PIXELS } from "../adapters/probes/image-probe.ts";
import { derivePaintLayers, displayedPixels, type PaintLayers } from "./mask-pixels.ts";
import { WeightedGate } from "./weighted-gate.ts";

export interface MaskDeriveDeps {
  store: BlobStore;
  logger?: Logger;
  /** Mask jobs deriving at once in this process (WORKER_CONCURRENCY); see `maskSlots`. */
  concurrency?: number;
  /** UV_THREADPOOL_SIZE, when set; see `maskSlots`. */
  threadpool?: number;
  /** Where a job's scratch files go (the blobs of a store without local files, the derived PNGs); default os.tmpdir(). */
  scratchDir?: string;
}

/** libuv's thread pool when UV_THREADPOOL_SIZE is unset (libuv's own default, not a setting of ours). */
const LIBUV_DEFAULT_THREADS = 4;

/**
 * How many mask jobs derive at once. Each runs one sharp pipeline at a time, and a pipeline holds
 * one libuv thread while libvips works (its own thread does the pixels: sharp.concurrency 1), so
 * at least two of libuv's threads (UV_THREADPOOL_SIZE, 4 by default) stay free for the file,
 * DNS and zlib work of the requests this process serves.
 */
export function maskSlots(concurrency: number, threadpool = LIBUV_DEFAULT_THREADS): number {
  return Math.max(1, Math.min(concurrency, threadpool - 2));
}

/**
 * Pixels being derived at once in this process: one 64 MP original (the upload limit) runs
 * alone, smaller ones share. A job holds about 1.8 MiB a megapixel (P, one byte a pixel, plus
 * libvips' buffers), so mask work stays within about 120 MiB whatever arrives.
 */
export const MASK_PIXEL_BUDGET = MAX_PIXELS;

/**
 * The `mask.derive` job: applies the mask rules of `mask-pixels.ts` to the stored original and
 * mask and stores `painted` and `paint` as content-addressed PNGs tagged `derived`,
 * `original:<hash>`, `mask:<hash>`. Deterministic, so a rerun writes nothing new.
 *
 * Nothing here runs per pixel on the event loop: sharp reads the blobs from files (the store's
 * own, or a scratch copy streamed from S3), libvips does every pixel and writes the PNGs to
 * scratch files, which are then streamed into the store.
 */
export function createMaskDeriveHandler(deps: MaskDeriveDeps): JobHandler<"mask.derive"> {
  // One libvips thread per pipeline, and no operation cache: a cached 64 MP step would outlive its job.
  sharp.concurrency(1);
  sharp.cache(false);
  const gate = new WeightedGate(MASK_PIXEL_BUDGET, maskSlots(deps.concurrency ?? 2, deps.threadpool));
  const scratchRoot = deps.scratchDir ?? tmpdir();
  void sweepScratch(scratchRoot).catch((err: Error) =>
    deps.logger?.warn({ err: err.message }, "could not sweep old mask scratch directories"),
  );
  return async ({ originalHash, maskHash }) => {
    const scratch = await mkdtemp(join(scratchRoot, SCRATCH_PREFIX));
    try {
      const [original, mask] = await Promise.all([localFile(deps.store, originalHash, scratch), localFile(deps.store, maskHash, scratch)]);
      let derived: PaintLayers;
      try {
        const pixels = await displayedPixels(original);
        derived = await gate.run(pixels, () => derivePaintLayers({ original, mask, scratch }));
      } catch (err) {
        // The client's bytes: no retry can decode them. The code reaches the route (400 invalid_image).
        throw new UnrecoverableJobError(`cannot decode the original or the mask: ${(err as Error).message}`, "invalid_image");
      }
      const tags = ["derived", `original:${originalHash}`, `mask:${maskHash}`];
      const { width, height } = derived;
      const painted = await storePng(deps.store, derived.painted, width, height, [...tags, "painted"]);
      const paint = await storePng(deps.store, derived.paint, width, height, [...tags, "paint"]);
      deps.logger?.debug({ originalHash, maskHash, maskType: derived.maskType }, "mask derivatives stored");
      const result: JobResult<"mask.derive"> = { maskType: derived.maskType, painted, paint };
      return result;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  };
}

const SCRATCH_PREFIX = "mask-derive-";
/** A job's scratch directory this old was left by a process that died mid-job (a 64 MP job takes seconds). */
export const SCRATCH_MAX_AGE_MS = 60 * 60 * 1000;

/** Remove the scratch directories of jobs cut off by a crash: at start, as the stores sweep their temporaries. */
export async function sweepScratch(root: string, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!name.startsWith(SCRATCH_PREFIX)) continue;
    const dir = join(root, name);
    const modified = await stat(dir).then(
      (s) => s.mtimeMs,
      () => now,
    );
    if (now - modified < SCRATCH_MAX_AGE_MS) continue;
    await rm(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

async function storePng(store: BlobStore, path: string, width: number, height: number, tags: string[]): Promise<string> {
  const staged = await store.stage(createReadStream(path));
  await staged.commit((existing) =>
    mergeSidecar(existing, { hash: staged.hash, ext: "png", mime: "image/png", size: staged.size, width, height, tags }),
  );
  return assetName(staged.hash, "png");
}

/** A file holding the blob: the store's own (fs), or a scratch copy streamed from it (S3). */
async function localFile(store: BlobStore, hash: string, scratch: string): Promise<string> {
  const missing = () => new UnrecoverableJobError(`no stored image ${hash}`, "original_not_found");
  const own = store.localPath(hash);
  if (own !== null) {
    if ((await store.stat(hash)) === null) throw missing();
    return own;
  }
  const copy = join(scratch, hash);
  try {
    await pipeline(await store.read(hash), createWriteStream(copy));
  } catch (err) {
    if (err instanceof BlobNotFoundError) throw missing();
    throw err;
  }
  return copy;
}
