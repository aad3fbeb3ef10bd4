import sharp from "sharp";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jobIds } from "@app/contracts";
import { blake3Hex, expectUploadError, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { corruptBodyPng, noisePng, pixelPng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

const W = 4;
const H = 2;

/** An opaque 4×2 original whose every pixel differs. */
async function original(): Promise<Buffer> {
  const raw = Buffer.alloc(W * H * 3);
  for (let i = 0; i < W * H; i++) raw.set([10 + i * 20, 200 - i * 10, 7 * i], i * 3);
  return pixelPng(raw, W, H, 3);
}

async function pixelsOf(name: string): Promise<Buffer> {
  const hash = name.split(".")[0]!;
  const chunks: Buffer[] = [];
  for await (const c of await t.blobs.read(hash)) chunks.push(c as Buffer);
  const { data, info } = await sharp(Buffer.concat(chunks)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height]).toEqual([W, H]);
  return data;
}

const alphaOf = (rgba: Buffer) => Array.from({ length: rgba.length / 4 }, (_, i) => rgba[i * 4 + 3]);
const rgbOf = (rgba: Buffer) => Array.from({ length: rgba.length / 4 }, (_, i) => [rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2]]);

async function uploadOriginal(bytes: Buffer): Promise<string> {
  const res = await keyedClient(t.app, KEY)
    .post("/api/upload/image")
    .attach("image", bytes, { filename: "orig.png" })
    .field("type", "input");
  expect(res.status).toBe(200);
  return res.body.name;
}

const postMask = (mask: Buffer, originalRef: string, path = "/api/upload/mask") =>
  request(t.app)
    .post(path)
    .set("X-API-Key", KEY)
    .attach("image", mask, { filename: "clipspace-mask-123.png", contentType: "image/png" })
    .field("original_ref", originalRef)
    .field("type", "input")
    .field("subfolder", "clipspace");

describe("POST /api/upload/mask", () => {
  it("applies a mask with alpha: its alpha becomes the painted alpha; paint is black where masked", async () => {
    const orig = await original();
    const name = await uploadOriginal(orig);
    // left half transparent (masked), right half opaque; RGB deliberately noisy
    const alpha = [0, 0, 255, 255, 0, 0, 255, 255];
    const mask = await pixelPng(
      alpha.flatMap((a, i) => [i * 30, 255 - i * 30, 99, a]),
      W,
      H,
      4,
    );
    const res = await postMask(mask, JSON.stringify({ filename: name, subfolder: "", type: "input" }));
    expect(res.status).toBe(200);
    const { metadata } = res.body;
    expect(res.body).toMatchObject({ name: metadata.related_files.painted, subfolder: "clipspace", type: "input" });
    expect(metadata).toMatchObject({ is_mask: true, original_hash: `blake3:${blake3Hex(orig)}`, mask_type: "alpha" });
    expect(metadata.related_files.mask).toBe(`${blake3Hex(mask)}.png`);

    const origRgba = await sharp(orig).ensureAlpha().raw().toBuffer();
    const painted = await pixelsOf(metadata.related_files.painted);
    expect(rgbOf(painted)).toEqual(rgbOf(origRgba));
    expect(alphaOf(painted)).toEqual(alpha);
    const paint = await pixelsOf(metadata.related_files.paint);
    expect(rgbOf(paint)).toEqual(Array.from({ length: W * H }, () => [0, 0, 0]));
    expect(alphaOf(paint)).toEqual(alpha.map((a) => 255 - a));
  });

  it("applies a mask without alpha by luminance: white = masked, painted alpha = 255 − luminance", async () => {
    const orig = await original();
    const name = await uploadOriginal(orig);
    const lum = [255, 255, 0, 0, 128, 64, 0, 255];
    const mask = await pixelPng(lum, W, H, 1);
    const res = await postMask(mask, name);
    expect(res.status).toBe(200);
    expect(res.body.metadata.mask_type).toBe("luminance");
    const painted = await pixelsOf(res.body.name);
    expect(alphaOf(painted)).toEqual(lum.map((l) => 255 - l));
    expect(rgbOf(painted)).toEqual(rgbOf(await sharp(orig).ensureAlpha().raw().toBuffer()));
    expect(alphaOf(await pixelsOf(res.body.metadata.related_files.paint))).toEqual(lum);
  });

  it("treats an RGB black-and-white mask by luminance too", async () => {
    const name = await uploadOriginal(await original());
    const lum = [255, 0, 255, 0, 0, 255, 0, 255];
    const mask = await pixelPng(
      lum.flatMap((l) => [l, l, l]),
      W,
      H,
      3,
    );
    const res = await postMask(mask, name);
    expect(res.body.metadata.mask_type).toBe("luminance");
    expect(alphaOf(await pixelsOf(res.body.name))).toEqual(lum.map((l) => 255 - l));
  });

  it("resizes a mask of another size to the original's", async () => {
    const name = await uploadOriginal(await original());
    // 40×20 mask: left half masked (alpha 0), right half not
    const big = Array.from({ length: 40 * 20 }, (_, i) => (i % 40 < 20 ? [0, 0, 0, 0] : [0, 0, 0, 255])).flat();
    const res = await postMask(await pixelPng(big, 40, 20, 4), name);
    expect(res.status).toBe(200);
    const a = alphaOf(await pixelsOf(res.body.name));
    // outer columns exact; the two beside the edge are blended by the resampling, on the right side of half
    expect([a[0], a[4]]).toEqual([0, 0]);
    expect([a[3], a[7]]).toEqual([255, 255]);
    for (const i of [1, 5]) expect(a[i]).toBeLessThan(128);
    for (const i of [2, 6]) expect(a[i]).toBeGreaterThan(128);
  });

  it("derives from an EXIF-rotated JPEG at its displayed size", async () => {
    // stored 6×4, shown 4×6 (orientation 6 = rotate 90° clockwise)
    const jpeg = await sharp({ create: { width: 6, height: 4, channels: 3, background: "#808080" } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const name = await uploadOriginal(jpeg);
    const res = await postMask(
      await pixelPng(
        Array.from({ length: 24 }, () => 255),
        4,
        6,
        1,
      ),
      name,
    );
    expect(res.status).toBe(200);
    const chunks: Buffer[] = [];
    for await (const c of await t.blobs.read(res.body.name.split(".")[0])) chunks.push(c as Buffer);
    const { data, info } = await sharp(Buffer.concat(chunks)).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([4, 6, 4]);
    expect(alphaOf(data).every((a) => a === 0)).toBe(true); // all white = all masked
  });

  it("stores mask and derivatives as tagged content-addressed assets; a retry writes nothing new", async () => {
    const orig = await original();
    const name = await uploadOriginal(orig);
    const mask = await pixelPng([0, 255, 0, 255, 0, 255, 0, 255], W, H, 1);
    const first = await postMask(mask, name);
    const listed = await t.blobs.list();
    expect(listed).toHaveLength(4); // original, mask, paint, painted
    const h = (n: string) => n.split(".")[0]!;
    const oh = blake3Hex(orig);
    const mh = blake3Hex(mask);
    expect((await t.blobs.getSidecar(mh))?.tags).toEqual(expect.arrayContaining(["mask", "input", `original:${oh}`]));
    for (const [file, role] of [
      [first.body.metadata.related_files.painted, "painted"],
      [first.body.metadata.related_files.paint, "paint"],
    ] as const) {
      const rec = await t.blobs.getSidecar(h(file));
      expect(rec).toMatchObject({ ext: "png", mime: "image/png", width: W, height: H });
      expect(rec?.tags).toEqual(expect.arrayContaining(["derived", `original:${oh}`, `mask:${mh}`, role]));
    }
    const again = await postMask(mask, name, "/upload/mask");
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await t.blobs.list()).toEqual(listed);
  });

  it.each([
    ["a plain name", (n: string) => n],
    ["a name with ComfyUI's ' [input]' suffix", (n: string) => `${n} [input]`],
    ["JSON with the suffix", (n: string) => JSON.stringify({ filename: `${n} [output]`, subfolder: "clipspace", type: "output" })],
    ["blake3:<hex>", (n: string) => `blake3:${n.split(".")[0]}`],
    ["a whole upload result with name only", (n: string) => JSON.stringify({ name: n, subfolder: "", type: "input" })],
    [
      "filename winning over a wrong name",
      (n: string) => JSON.stringify({ name: "nonsense", filename: n, subfolder: "", type: "input", extra: [1] }),
    ],
  ])("finds the original from %s", async (_label, ref) => {
    const orig = await original();
    const name = await uploadOriginal(orig);
    const res = await postMask(await pixelPng([0, 0, 0, 0, 255, 255, 255, 255], W, H, 1), ref(name));
    expect(res.status).toBe(200);
    expect(res.body.metadata.original_hash).toBe(`blake3:${blake3Hex(orig)}`);
  });

  it("an original that does not decode: 400 invalid_image after a single attempt of the job (a client error is not retried)", async () => {
    const bad = await corruptBodyPng(64, 64);
    const name = await uploadOriginal(bad); // the header is whole: accepted at upload
    const mask = await pixelPng([0, 0, 0, 0, 255, 255, 255, 255], W, H, 1);
    const res = await postMask(mask, name);
    expect(res.status).toBe(400);
    expectUploadError(res.body, "invalid_image");
    const jobId = jobIds.maskDerive({ originalHash: blake3Hex(bad), maskHash: blake3Hex(mask) });
    expect(await t.deps.queue.inspect(jobId)).toMatchObject({ state: "failed", attemptsMade: 1, failureCode: "invalid_image" });
  });

  it("unknown original: 404 original_not_found, and the mask is not stored", async () => {
    const mask = await pixelPng([0, 0, 0, 0, 255, 255, 255, 255], W, H, 1);
    const res = await postMask(mask, `${"b".repeat(64)}.png`);
    expect(res.status).toBe(404);
    expectUploadError(res.body, "original_not_found");
    expect(await t.blobs.list()).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it.each([
    "",
    "{",
    "[]",
    "null",
    '{"filename": 5}',
    '{"subfolder": "clipspace"}',
    "blake3:xyz",
    "blake3:" + "A".repeat(64),
    "../../etc/passwd",
    "/abs/x.png",
    "cat.png",
    `${"c".repeat(64)}.exe`,
  ])("original_ref %j: 400 invalid_original_ref", async (ref) => {
    const name = await uploadOriginal(await original());
    expect(name).toBeTruthy();
    const res = await postMask(await pixelPng([0, 0, 0, 0, 255, 255, 255, 255], W, H, 1), ref);
    expect(res.status).toBe(400);
    expectUploadError(res.body, "invalid_original_ref");
  });

  it("comfy-ui-client's originalRef is an alias of original_ref; both may be sent when they name the same image", async () => {
    const orig = await original();
    const name = await uploadOriginal(orig);
    const mask = await pixelPng([0, 0, 0, 0, 255, 255, 255, 255], W, H, 1);
    const send = (fields: [string, string][]) => {
      let req = keyedClient(t.app, KEY).post("/upload/mask").attach("image", mask, { filename: "mask.png" });
      for (const [k, v] of fields) req = req.field(k, v);
      return req;
    };
    for (const fields of [
      [["originalRef", name]],
      [
        ["originalRef", JSON.stringify({ filename: name, subfolder: "", type: "input" })],
        ["original_ref", `blake3:${blake3Hex(orig)}`],
      ],
    ] as [string, string][][]) {
      const res = await send(fields);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.metadata.original_hash).toBe(`blake3:${blake3Hex(orig)}`);
    }
    const other = await uploadOriginal(await noisePng(W, H));
    const differ = await send([
      ["original_ref", name],
      ["originalRef", other],
    ]);
    expect(differ.status).toBe(400);
    expectUploadError(differ.body, "invalid_original_ref");
    expect(differ.body.message).toMatch(/originalRef/);
    const badAlias = await send([["originalRef", "cat.png"]]);
    expect(badAlias.status).toBe(400);
    expectUploadError(badAlias.body, "invalid_original_ref");
  });

  it("a job slower than MASK_JOB_TIMEOUT_MS: 503 unavailable, the job finishes, the retry gets the result", async () => {
    const name = await uploadOriginal(await noisePng(1024, 1024));
    const mask = await pixelPng(
      Array.from({ length: 64 * 64 }, (_, i) => (i % 3 ? 255 : 0)),
      64,
      64,
      1,
    );
    t.deps.settings.maskJobTimeoutMs = 1;
    const slow = await postMask(mask, name);
    expect(slow.status).toBe(503);
    expectUploadError(slow.body, "unavailable");
    t.deps.settings.maskJobTimeoutMs = 30_000;
    const retry = await postMask(mask, name);
    expect(retry.status).toBe(200);
    expect(retry.body.metadata.mask_type).toBe("luminance");
    expect(await t.blobs.list()).toHaveLength(4);
  });
});
