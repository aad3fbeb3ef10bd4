import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { blake3Hex, expectUploadError, KEY, makeTestApp, multipart, type TestApp } from "./helpers.ts";
import { noisePng, pngClaiming } from "@app/testkit/png";
import { keyedClient } from "@app/testkit/keyed-client";

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp({ settings: { maxBytes: 2 * 1024 * 1024 } });
});
afterEach(async () => {
  await t.close();
});

const upload = (path = "/api/upload/image") => keyedClient(t.app, KEY).post(path);

describe("POST /api/upload/image", () => {
  it("stores the image under the blake3 of its bytes and answers {name, subfolder, type}", async () => {
    const png = await noisePng(32, 24);
    const res = await upload().attach("image", png, { filename: "clipspace-mask-123.png", contentType: "image/png" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: `${blake3Hex(png)}.png`, subfolder: "", type: "output" });
    expect(await t.blobs.list()).toEqual([blake3Hex(png)]);
    const record = await t.blobs.getSidecar(blake3Hex(png));
    expect(record).toMatchObject({
      hash: blake3Hex(png),
      ext: "png",
      mime: "image/png",
      size: png.length,
      width: 32,
      height: 24,
      tags: ["output"],
    });
    expect(record?.first_uploaded_at).toBe(record?.last_uploaded_at);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("gives identical bytes the identical name whatever filename, subfolder, type or overwrite, and adds the type as a tag", async () => {
    const png = await noisePng(16, 16);
    const first = await upload().attach("image", png, { filename: "a.png" }).field("type", "input").field("subfolder", "clipspace");
    const statBefore = await t.blobs.stat(blake3Hex(png));
    const second = await upload()
      .attach("image", png, { filename: "other-name.jpg", contentType: "image/jpeg" })
      .field("type", "temp")
      .field("subfolder", "x/y")
      .field("overwrite", "true");
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body).toEqual({ name: `${blake3Hex(png)}.png`, subfolder: "clipspace", type: "input" });
    expect(second.body).toEqual({ name: `${blake3Hex(png)}.png`, subfolder: "x/y", type: "temp" });
    expect(await t.blobs.list()).toHaveLength(1);
    expect(await t.blobs.stat(blake3Hex(png))).toEqual(statBefore); // the bytes were not rewritten
    const record = await t.blobs.getSidecar(blake3Hex(png));
    expect(record?.tags.sort()).toEqual(["input", "temp"]);
    expect(Date.parse(record!.last_uploaded_at)).toBeGreaterThanOrEqual(Date.parse(record!.first_uploaded_at));
  });

  it("/upload/image and /api/upload/image store the same asset", async () => {
    const png = await noisePng(8, 8);
    const a = await upload("/upload/image").attach("image", png, { filename: "x.png" });
    const b = await upload("/api/upload/image").attach("image", png, { filename: "y.png" });
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    expect(await t.blobs.list()).toEqual([blake3Hex(png)]);
  });

  it.each([
    ["png", "png", "image/png"],
    ["jpeg", "jpg", "image/jpeg"],
    ["webp", "webp", "image/webp"],
    ["gif", "gif", "image/gif"],
    ["avif", "avif", "image/avif"],
    ["tiff", "tiff", "image/tiff"],
  ] as const)("names a %s by what the bytes are, not by the filename or declared type", async (format, ext, mime) => {
    const bytes = await sharp({ create: { width: 10, height: 7, channels: 3, background: "#3a7" } })
      .toFormat(format)
      .toBuffer();
    const res = await upload().attach("image", bytes, { filename: "lies.png", contentType: "image/png" });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(`${blake3Hex(bytes)}.${ext}`);
    expect(await t.blobs.getSidecar(blake3Hex(bytes))).toMatchObject({ ext, mime, width: 10, height: 7 });
  });

  it("echoes subfolder and type, defaulting to '' and 'output'", async () => {
    const png = await noisePng(4, 4);
    const res = await upload().attach("image", png, { filename: "a.png" }).field("subfolder", "clipspace/nested").field("type", "input");
    expect(res.body).toMatchObject({ subfolder: "clipspace/nested", type: "input" });
  });
});

describe("bad input to /api/upload/image", () => {
  it("no image part: 400 missing_image", async () => {
    const res = await upload().field("type", "input");
    expect(res.status).toBe(400);
    expectUploadError(res.body, "missing_image");
  });

  it("image sent as a text field: 400 missing_image saying so", async () => {
    const res = await upload().field("image", "not a file");
    expect(res.status).toBe(400);
    expectUploadError(res.body, "missing_image");
    expect(res.body.message).toMatch(/text field/);
  });

  it.each([
    ["text", Buffer.from("hello, I am not an image")],
    ["empty", Buffer.alloc(0)],
    ["png magic then garbage", Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)])],
    ["svg", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')],
  ])("%s: 400 invalid_image, nothing stored", async (_label, bytes) => {
    const res = await upload().attach("image", bytes, { filename: "cat.png", contentType: "image/png" });
    expect(res.status).toBe(400);
    expectUploadError(res.body, "invalid_image");
    expect(await t.blobs.list()).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it.each([
    [16_385, 1],
    [1, 16_385],
    [8193, 8193],
    [100_000, 100_000],
  ])("an image of %i×%i: 400 image_too_large without decoding it", async (w, h) => {
    const res = await upload().attach("image", pngClaiming(w, h), { filename: "bomb.png" });
    expect(res.status).toBe(400);
    expectUploadError(res.body, "image_too_large");
    expect(await t.blobs.list()).toEqual([]);
  });

  it("an image at the limits (16384×1, 8192×8192 header) is accepted", async () => {
    for (const [w, h] of [
      [16_384, 1],
      [8192, 8192],
    ] as const) {
      const res = await upload().attach("image", pngClaiming(w, h), { filename: "edge.png" });
      expect(res.status).toBe(200);
    }
  });

  it.each(["../x", "a/../../b", "..", "/etc", "\\\\server\\share", "C:\\temp", "a\\..\\b", "a\0b"])(
    "subfolder %j: 400 invalid_subfolder, nothing stored",
    async (subfolder) => {
      const { body, contentType } = multipart([
        { name: "image", filename: "a.png", contentType: "image/png", body: await noisePng(4, 4) },
        { name: "subfolder", body: subfolder },
      ]);
      const res = await upload().set("Content-Type", contentType).send(body);
      expect(res.status).toBe(400);
      expectUploadError(res.body, "invalid_subfolder");
      expect(await t.blobs.list()).toEqual([]);
      expect(await t.blobs.temporaries()).toEqual([]);
    },
  );

  it("a type that cannot be a tag: 400 invalid_type", async () => {
    const res = await upload()
      .attach("image", await noisePng(4, 4), { filename: "a.png" })
      .field("type", "in put/../x");
    expect(res.status).toBe(400);
    expectUploadError(res.body, "invalid_type");
  });

  it.each([
    ["no content type", undefined, "x"],
    ["json", "application/json", "{}"],
    ["multipart without boundary", "multipart/form-data", "--x\r\n"],
  ])("%s: 400 malformed_multipart", async (_label, contentType, body) => {
    let req = upload();
    if (contentType) req = req.set("Content-Type", contentType);
    const res = await req.send(body);
    expect(res.status).toBe(400);
    expectUploadError(res.body, "malformed_multipart");
  });

  it("a truncated body: 400 malformed_multipart, no temporary left", async () => {
    const { body, contentType } = multipart([{ name: "image", filename: "a.png", body: await noisePng(64, 64) }]);
    const res = await upload()
      .set("Content-Type", contentType)
      .send(body.subarray(0, body.length - 300));
    expect(res.status).toBe(400);
    expectUploadError(res.body, "malformed_multipart");
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("too many parts: 400 malformed_multipart", async () => {
    const parts = Array.from({ length: 2000 }, (_, i) => ({ name: `f${i}`, body: "x" }));
    const { body, contentType } = multipart(parts);
    const res = await upload().set("Content-Type", contentType).send(body);
    expect(res.status).toBe(400);
    expectUploadError(res.body, "malformed_multipart");
  });
});

/** Raw HTTP, because the server answers 413 before the client has finished sending. */
function rawPost(app: TestApp["app"], path: string, headers: Record<string, string>, chunks: Buffer[], opts: { abortAfter?: number } = {}) {
  return new Promise<{ status: number; body: string } | "aborted">((resolve, reject) => {
    const server = app.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      const req = httpRequest({ port, host: "127.0.0.1", method: "POST", path, headers: { "x-api-key": KEY, ...headers } });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => {
          server.close();
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on("error", (err) => {
        server.close();
        if (opts.abortAfter !== undefined) resolve("aborted");
        else reject(err);
      });
      let i = 0;
      const pump = () => {
        if (opts.abortAfter !== undefined && i === opts.abortAfter) {
          setTimeout(() => {
            req.destroy();
            server.closeAllConnections();
            setTimeout(() => {
              server.close();
              resolve("aborted");
            }, 50);
          }, 50);
          return;
        }
        if (i >= chunks.length) return void req.end();
        const ok = req.write(chunks[i++]!);
        if (ok) setImmediate(pump);
        else req.once("drain", pump);
      };
      pump();
    });
  });
}

describe("size limit and aborted uploads", () => {
  it("a body over UPLOAD_MAX_BYTES (declared): 413 payload_too_large, nothing stored", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 1);
    const { body, contentType } = multipart([{ name: "image", filename: "big.png", body: big }]);
    const res = await rawPost(t.app, "/api/upload/image", { "content-type": contentType, "content-length": String(body.length) }, [body]);
    expect(res).not.toBe("aborted");
    if (res === "aborted") return;
    expect(res.status).toBe(413);
    expectUploadError(JSON.parse(res.body), "payload_too_large");
    expect(await t.blobs.list()).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("a chunked body over UPLOAD_MAX_BYTES: the stream is cut at the limit, 413, nothing stored", async () => {
    const { body, contentType } = multipart([{ name: "image", filename: "big.png", body: Buffer.alloc(5 * 1024 * 1024, 2) }]);
    const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));
    const res = await rawPost(t.app, "/api/upload/image", { "content-type": contentType, "transfer-encoding": "chunked" }, chunks);
    if (res !== "aborted") {
      expect(res.status).toBe(413);
      expectUploadError(JSON.parse(res.body), "payload_too_large");
    }
    expect(await t.blobs.list()).toEqual([]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });

  it("a client that goes away mid-upload leaves no temporary and the service keeps serving", async () => {
    const { body, contentType } = multipart([{ name: "image", filename: "a.png", body: Buffer.alloc(1024 * 1024, 3) }]);
    const chunks = Array.from({ length: 16 }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));
    const res = await rawPost(t.app, "/api/upload/image", { "content-type": contentType, "content-length": String(body.length) }, chunks, {
      abortAfter: 8,
    });
    expect(res).toBe("aborted");
    for (let i = 0; i < 100 && (await t.blobs.temporaries()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await t.blobs.temporaries()).toEqual([]);
    expect(await t.blobs.list()).toEqual([]);
    const ok = await upload().attach("image", await noisePng(4, 4), { filename: "a.png" });
    expect(ok.status).toBe(200);
  });

  it("racing uploads of the same new image all succeed with one name and leave one object", async () => {
    const png = await noisePng(200, 200);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => upload().attach("image", png, { filename: `r${i}.png` })));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(results.map((r) => r.body.name))).toEqual(new Set([`${blake3Hex(png)}.png`]));
    expect(await t.blobs.list()).toEqual([blake3Hex(png)]);
    expect(await t.blobs.temporaries()).toEqual([]);
  });
});

describe("slow clients", () => {
  it("a body that stops arriving: 408 request_timeout after BODY_TIMEOUT_MS, temporary removed", async () => {
    const slow = await makeTestApp({ settings: { bodyTimeoutMs: 300 } });
    try {
      const { body, contentType } = multipart([{ name: "image", filename: "a.png", body: Buffer.alloc(200_000, 5) }]);
      const server = slow.app.listen(0, "127.0.0.1");
      await new Promise((r) => server.once("listening", r));
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({
          port: (server.address() as AddressInfo).port,
          host: "127.0.0.1",
          method: "POST",
          path: "/api/upload/image",
          headers: { "x-api-key": KEY, "content-type": contentType, "content-length": String(body.length) },
        });
        req.on("response", (r) => {
          let text = "";
          r.on("data", (d) => (text += d));
          r.on("end", () => resolve({ status: r.statusCode ?? 0, body: text }));
        });
        req.on("error", reject);
        req.write(body.subarray(0, 100_000)); // ...and never the rest
      });
      server.closeAllConnections();
      server.close();
      expect(res.status).toBe(408);
      expectUploadError(JSON.parse(res.body), "request_timeout");
      expect(await slow.blobs.temporaries()).toEqual([]);
      expect(await slow.blobs.list()).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
