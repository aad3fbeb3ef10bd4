import { mkdir, readFile, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp, { type Sharp } from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASK_PIXEL_BUDGET, maskSlots, SCRATCH_MAX_AGE_MS, sweepScratch } from "../src/jobs/mask-derive.ts";
import { WeightedGate } from "../src/jobs/weighted-gate.ts";
import { derivePaintLayers } from "../src/jobs/mask-pixels.ts";

/**
 * The native derivation against the rules computed in JavaScript, as the earlier version did
 * them (libvips decodes and resizes; P = alpha, or 255 − luminance; paint's alpha = 255 − P, each
 * byte in a JS loop; PNGs encoded from the raw planes): the same pixels and the same PNG bytes
 * (the same asset names), for originals and masks of every kind sharp reads, but for painted's
 * pHYs chunk, which now carries the original's own resolution.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mask-pixels-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const W = 37;
const H = 23;

/** Pixels that differ everywhere, in `channels` bands. */
function pattern(width: number, height: number, channels: number, seed: number): Sharp {
  const raw = Buffer.alloc(width * height * channels);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 37 + seed * 101 + ((i * i) >> 3)) & 0xff;
  return sharp(raw, { raw: { width, height, channels: channels as 1 | 2 | 3 | 4 } });
}

const originals: [string, () => Promise<Buffer>][] = [
  ["RGB PNG", () => pattern(W, H, 3, 1).png().toBuffer()],
  ["RGBA PNG", () => pattern(W, H, 4, 2).png().toBuffer()],
  ["grey PNG", () => pattern(W, H, 1, 3).png().toBuffer()],
  ["grey + alpha PNG", () => pattern(W, H, 2, 4).png().toBuffer()],
  ["16-bit RGB PNG", () => pattern(W, H, 3, 5).toColourspace("rgb16").png().toBuffer()],
  ["16-bit grey PNG", () => pattern(W, H, 1, 6).toColourspace("grey16").png().toBuffer()],
  ["palette PNG with transparency", () => pattern(W, H, 4, 7).png({ palette: true }).toBuffer()],
  ["JPEG", () => pattern(W, H, 3, 8).jpeg().toBuffer()],
  ["JPEG, EXIF orientation 6", () => pattern(W, H, 3, 9).jpeg().withMetadata({ orientation: 6 }).toBuffer()],
  ["CMYK JPEG", () => pattern(W, H, 3, 10).toColourspace("cmyk").jpeg().toBuffer()],
  ["PNG with a Display P3 profile", () => pattern(W, H, 3, 11).withIccProfile("p3").png().toBuffer()],
  ["lossless WebP with alpha", () => pattern(W, H, 4, 12).webp({ lossless: true }).toBuffer()],
  ["GIF", () => pattern(W, H, 3, 13).gif().toBuffer()],
  ["RGB PNG, 600 × 400", () => pattern(600, 400, 3, 14).png().toBuffer()],
];

const masks: [string, () => Promise<Buffer>][] = [
  ["RGBA mask of another size", () => pattern(50, 30, 4, 20).png().toBuffer()],
  ["grey mask", () => pattern(W, H, 1, 21).png().toBuffer()],
  ["RGB mask", () => pattern(12, 40, 3, 22).png().toBuffer()],
  ["grey + alpha mask", () => pattern(W, H, 2, 23).png().toBuffer()],
  ["16-bit grey mask", () => pattern(W, H, 1, 24).toColourspace("grey16").png().toBuffer()],
  ["16-bit RGBA mask", () => pattern(W, H, 4, 25).toColourspace("rgb16").png().toBuffer()],
];

/** The earlier version's derivation, step for step. */
async function reference(original: Buffer, mask: Buffer): Promise<{ painted: Buffer; paint: Buffer; maskType: string }> {
  const meta = await sharp(original).metadata();
  const swap = (meta.orientation ?? 1) >= 5;
  const width = swap ? meta.height : meta.width;
  const height = swap ? meta.width : meta.height;
  const maskType = (await sharp(mask).metadata()).hasAlpha ? "alpha" : "luminance";
  const resized = sharp(mask).rotate().resize(width, height, { fit: "fill", kernel: "linear" });
  const channel =
    maskType === "alpha"
      ? await resized.toColourspace("srgb").ensureAlpha().extractChannel(3).raw({ depth: "uchar" }).toBuffer()
      : await resized.toColourspace("b-w").extractChannel(0).raw({ depth: "uchar" }).toBuffer();
  const alpha = maskType === "alpha" ? channel : Buffer.from(channel.map((v) => 255 - v));
  const paintAlpha = Buffer.from(alpha.map((v) => 255 - v));
  const rgb = await sharp(original).rotate().toColourspace("srgb").removeAlpha().raw({ depth: "uchar" }).toBuffer();
  const plane = { raw: { width, height, channels: 1 as const } };
  return {
    maskType,
    painted: await sharp(rgb, { raw: { width, height, channels: 3 } })
      .joinChannel(alpha, plane)
      .png({ compressionLevel: 6 })
      .toBuffer(),
    paint: await sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
      .joinChannel(paintAlpha, plane)
      .png({ compressionLevel: 6 })
      .toBuffer(),
  };
}

/** A PNG without its chunks of one type. */
function withoutChunk(png: Buffer, type: string): Buffer {
  const kept = [png.subarray(0, 8)];
  for (let at = 8; at < png.length;) {
    const end = at + 12 + png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) !== type) kept.push(png.subarray(at, end));
    at = end;
  }
  return Buffer.concat(kept);
}

/** The first byte at which two PNGs' decoded pixels differ, or -1. */
async function firstDifference(a: Buffer, b: Buffer): Promise<number> {
  const [pa, pb] = [await sharp(a).raw().toBuffer(), await sharp(b).raw().toBuffer()];
  if (pa.length !== pb.length) return 0;
  return pa.findIndex((v, i) => v !== pb[i]);
}

describe("derivePaintLayers", () => {
  for (const [originalKind, makeOriginal] of originals) {
    it(`${originalKind}: painted and paint are the earlier version's pixels and PNG bytes (painted's pHYs aside), for every kind of mask`, async () => {
      const original = await makeOriginal();
      for (const [maskKind, makeMask] of masks) {
        const mask = await makeMask();
        const scratch = await mkdtemp(join(dir, "job-"));
        await writeFile(join(scratch, "o"), original);
        await writeFile(join(scratch, "m"), mask);
        const got = await derivePaintLayers({ original: join(scratch, "o"), mask: join(scratch, "m"), scratch });
        const want = await reference(original, mask);
        expect(got.maskType, maskKind).toBe(want.maskType);
        const [painted, paint] = [await readFile(got.painted), await readFile(got.paint)];
        // Pixels first (a clearer failure), then the bytes that make the asset names.
        expect(await firstDifference(painted, want.painted), `painted, ${maskKind}`).toBe(-1);
        expect(await firstDifference(paint, want.paint), `paint, ${maskKind}`).toBe(-1);
        // The one deliberate change: painted keeps the original's resolution (pHYs); everything else is the same bytes.
        expect(withoutChunk(painted, "pHYs").equals(withoutChunk(want.painted, "pHYs")), `painted bytes, ${maskKind}`).toBe(true);
        // An original without a resolution of its own (or with 1 px/mm) gives exactly the earlier bytes.
        if (((await sharp(original).metadata()).density ?? 25.4).toFixed(1) === "25.4")
          expect(painted.equals(want.painted), `painted bytes, ${maskKind}`).toBe(true);
        expect(paint.equals(want.paint), `paint bytes, ${maskKind}`).toBe(true);
      }
    });
  }
});

describe("maskSlots", () => {
  it("mask jobs at once: WORKER_CONCURRENCY, but never more than libuv's threads less two, and at least one", () => {
    expect(maskSlots(2)).toBe(2);
    expect(maskSlots(8)).toBe(2);
    expect(maskSlots(8, 16)).toBe(8);
    expect(maskSlots(1, 2)).toBe(1);
    expect(maskSlots(3, 1)).toBe(1);
  });
});

describe("WeightedGate (the mask jobs' pixel budget)", () => {
  /** Starts `weights` through the gate; each piece runs until released by hand. */
  function pieces(gate: WeightedGate, weights: number[]) {
    const running = new Set<number>();
    const release = new Map<number, () => void>();
    const done = weights.map((w, i) =>
      gate.run(w, async () => {
        running.add(i);
        await new Promise<void>((r) => release.set(i, r));
        running.delete(i);
      }),
    );
    const settle = () => new Promise((r) => setImmediate(r));
    const finish = async (i: number) => {
      release.get(i)!();
      await done[i];
      await settle();
    };
    return { running, finish, settle };
  }

  it("a 64 MP job runs alone; smaller ones share the budget, within the slots, in arrival order", async () => {
    const mp = 1024 * 1024;
    const gate = new WeightedGate(MASK_PIXEL_BUDGET, 2);
    const p = pieces(gate, [64 * mp, 16 * mp, 16 * mp, 16 * mp, 70 * mp]);
    await p.settle();
    expect([...p.running]).toEqual([0]);
    await p.finish(0);
    expect([...p.running].sort()).toEqual([1, 2]); // two slots
    await p.finish(1);
    expect([...p.running].sort()).toEqual([2, 3]);
    await p.finish(2);
    // The heavy one at the head waits for the whole budget; nothing behind it overtakes.
    expect([...p.running]).toEqual([3]);
    await p.finish(3);
    expect([...p.running]).toEqual([4]); // over the budget: counted as the budget, alone
    await p.finish(4);
    expect(p.running.size).toBe(0);
  });
});

describe("sweepScratch", () => {
  it("removes the scratch directories a crash left (older than an hour), keeps a running job's and anything else", async () => {
    const root = await mkdtemp(join(dir, "tmp-"));
    const old = (Date.now() - SCRATCH_MAX_AGE_MS - 60_000) / 1000;
    for (const name of ["mask-derive-crashed", "mask-derive-running", "someone-elses"]) {
      await mkdir(join(root, name));
      await writeFile(join(root, name, "painted.png"), "x");
      if (name !== "mask-derive-running") await utimes(join(root, name), old, old);
    }
    expect(await sweepScratch(root)).toBe(1);
    expect((await readdir(root)).sort()).toEqual(["mask-derive-running", "someone-elses"]);
  });
});
