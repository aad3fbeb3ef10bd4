import { randomUUID } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3BlobStore } from "@app/blobs/s3";
import { blake3Hex, expectUploadError, KEY, makeTestApp, type TestApp } from "./helpers.ts";
import { startS3, type RunningS3 } from "@app/testkit/s3rver";
import { noisePng } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

/** The upload routes' key cases once more, with the S3 store behind them (s3rver, real SigV4). */
let s3: RunningS3;
let t: TestApp;
beforeAll(async () => {
  s3 = await startS3();
  const store = new S3BlobStore({
    endPoint: "127.0.0.1",
    port: s3.port,
    useSSL: false,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    region: "us-east-1",
    bucket: `r-${randomUUID().slice(0, 8)}`,
    partSize: 5 * 1024 * 1024,
  });
  t = await makeTestApp({ blobs: store });
});
afterAll(async () => {
  await t?.close();
  await s3?.stop();
});

const upload = () => keyedClient(t.app, KEY).post("/api/upload/image");

describe("upload routes over the S3 store", () => {
  it("stores by hash, dedupes, and streams back with ETag and ranges", async () => {
    const png = await noisePng(300, 300); // one PUT
    const big = await sharp({
      create: { width: 1400, height: 1400, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } },
    })
      .png({ compressionLevel: 0 })
      .toBuffer();
    for (const bytes of [png, big]) {
      const a = await upload().attach("image", bytes, { filename: "a.png" }).field("type", "input");
      const b = await upload().attach("image", bytes, { filename: "b.png" }).field("type", "temp");
      expect(a.status).toBe(200);
      expect(a.body.name).toBe(`${blake3Hex(bytes)}.png`);
      expect(b.body.name).toBe(a.body.name);
      expect((await t.blobs.getSidecar(blake3Hex(bytes)))?.tags.sort()).toEqual(["input", "temp"]);
      const view = await keyedClient(t.app, KEY).get(`/view?filename=${a.body.name}`).buffer(true);
      expect(view.status).toBe(200);
      expect(view.headers.etag).toBe(`"${blake3Hex(bytes)}"`);
      expect(Buffer.from(view.body).equals(bytes)).toBe(true);
      const part = await keyedClient(t.app, KEY).get(`/api/view?filename=${a.body.name}`).set("Range", "bytes=0-0").buffer(true);
      expect(part.status).toBe(206);
      expect(Buffer.from(part.body).equals(bytes.subarray(0, 1))).toBe(true);
    }
    expect(big.length).toBeGreaterThan(5 * 1024 * 1024); // the multipart path ran
    expect(await t.blobs.list()).toHaveLength(2);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("refuses a non-image with 400 and leaves no temporary", async () => {
    const res = await upload().attach("image", Buffer.from("not an image"), { filename: "a.png" });
    expect(res.status).toBe(400);
    expectUploadError(res.body, "invalid_image");
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("makes mask derivatives from blobs in S3", async () => {
    const orig = await noisePng(8, 4);
    const up = await upload().attach("image", orig, { filename: "o.png" });
    const mask = await sharp(Buffer.from(Array.from({ length: 32 }, (_, i) => (i % 8 < 4 ? 255 : 0))), {
      raw: { width: 8, height: 4, channels: 1 },
    })
      .png()
      .toBuffer();
    const res = await keyedClient(t.app, KEY)
      .post("/api/upload/mask")
      .attach("image", mask, { filename: "m.png" })
      .field("original_ref", up.body.name);
    expect(res.status).toBe(200);
    expect(res.body.metadata.mask_type).toBe("luminance");
    const chunks: Buffer[] = [];
    for await (const c of await t.blobs.read(res.body.name.split(".")[0])) chunks.push(c as Buffer);
    const { data } = await sharp(Buffer.concat(chunks)).raw().toBuffer({ resolveWithObject: true });
    expect(Array.from({ length: 8 }, (_, i) => data[i * 4 + 3])).toEqual([0, 0, 0, 0, 255, 255, 255, 255]);
  });

  it("in redirect mode answers /view with a presigned URL that serves the bytes", async () => {
    const png = await noisePng(10, 10);
    const up = await upload().attach("image", png, { filename: "r.png" });
    t.deps.settings.viewMode = "redirect";
    try {
      const res = await keyedClient(t.app, KEY).get(`/api/view?filename=${up.body.name}`).redirects(0);
      expect(res.status).toBe(302);
      const fetched = await fetch(res.headers.location!);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get("content-type")).toBe("image/png");
      expect(Buffer.from(await fetched.arrayBuffer()).equals(png)).toBe(true);
    } finally {
      t.deps.settings.viewMode = "stream";
    }
  });
});
